"""Chapter 9 (docs/fast-attention.{zh,en}.md): snippets/fast_attention/*, checked against
PyTorch."""

import io
import math

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from qkvsite.dialect import version_tuple
from snippets.decoding.tiny_decoder import KVCache, TinyDecoder
from snippets.fast_attention.blocked_attention import blocked_attention
from snippets.fast_attention.exercises import merge, partial
from snippets.fast_attention.kv_cache import cache_numbers
from snippets.fast_attention.online_softmax import online_softmax
from snippets.positional_encoding.alibi import alibi_bias, alibi_slopes
from tests.conftest import ROOT, run_snippet

TORCH = version_tuple(torch.__version__)
needs_sdpa_kernel = pytest.mark.skipif(
    TORCH < (2, 3), reason="torch.nn.attention.sdpa_kernel appeared in torch 2.3"
)
needs_2_5 = pytest.mark.skipif(
    TORCH < (2, 5), reason="enable_gqa and flex_attention appeared in torch 2.5"
)
eager_flex = pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")


def qkv(B, H, L_q, L_k, d_k, device, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    make = lambda L: torch.randn(B, H, L, d_k, generator=g, dtype=dtype).to(device)  # noqa: E731
    return make(L_q), make(L_k), make(L_k)


# --- 8.1 online softmax
# -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 16])
def test_online_softmax_equals_torch_softmax_for_any_piece_size(size, device, dtype):
    row = (torch.randn(16, generator=torch.Generator().manual_seed(size), dtype=dtype) * 10).to(
        device
    )
    assert_close(online_softmax(row, size), torch.softmax(row, dim=-1))


def test_online_softmax_survives_scores_that_would_overflow_exp(device):
    # exp(1000) is inf in float32
    row = torch.tensor([1000.0, 1001.0, 999.0, 1002.0], device=device)
    assert_close(online_softmax(row, 2), torch.softmax(row, dim=-1))


def test_hand_trace_of_two_pieces_is_chapter_1s_car_row():
    ns = run_snippet("fast_attention/online_softmax.py")
    s = ns["s"].cpu()
    assert_close(s, torch.tensor([0.18, 0.28, 1.82]))
    # the page's numbers: piece 1 sum e^(0.18-0.28) + 1, piece 2 rescaled by e^(0.28-1.82), plus
    # e^0
    first = math.exp(0.18 - 0.28) + 1
    assert round(first, 4) == 1.9048
    assert round(first * math.exp(0.28 - 1.82) + 1, 4) == 1.4084 == round(ns["total"].item(), 4)
    assert round(1 + math.exp(0.18 - 1.82) + math.exp(0.28 - 1.82), 4) == 1.4084  # exercise 1
    weights = [round(math.exp(s - 1.82) / 1.4084, 4) for s in (0.18, 0.28, 1.82)]
    assert weights == [0.1377, 0.1522, 0.71]  # the weights the page works out by hand
    assert_close(ns["weights"], torch.softmax(ns["s"], dim=-1))
    assert_close(ns["out"], torch.softmax(ns["s"], dim=-1) @ ns["X"])


# --- 8.2 blocked attention
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("block_q, block_k", [(8, 8), (16, 32), (64, 24), (1, 64), (7, 5)])
@pytest.mark.parametrize("is_causal", [False, True], ids=["full", "causal"])
def test_blocked_attention_equals_sdpa_for_every_tile_size(
    block_q, block_k, is_causal, device, dtype
):
    q, k, v = qkv(2, 4, 64, 64, 16, device, dtype)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    assert_close(blocked_attention(q, k, v, block_q, block_k, is_causal), expected)


@pytest.mark.parametrize("L_q, L_k", [(3, 37), (37, 3), (20, 50)])
@pytest.mark.parametrize("is_causal", [False, True], ids=["full", "causal"])
def test_blocked_attention_with_fewer_or_more_queries_than_keys(L_q, L_k, is_causal, device, dtype):
    q, k, v = qkv(1, 2, L_q, L_k, 8, device, dtype)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    assert_close(blocked_attention(q, k, v, 8, 16, is_causal), expected)


def test_blocked_attention_handles_a_value_width_other_than_d_k(device):
    q, k, _ = qkv(1, 2, 10, 12, 8, device, torch.float32)
    v = torch.randn(1, 2, 12, 5).to(device)
    assert_close(blocked_attention(q, k, v, 4, 4), F.scaled_dot_product_attention(q, k, v))


def test_blocked_attention_does_not_overflow_on_large_scores(device):
    q, k, v = qkv(1, 1, 16, 16, 4, device, torch.float32)
    q = q * 200  # exp of the raw scores would overflow float32
    out = blocked_attention(q, k, v, 4, 4)
    assert torch.isfinite(out).all()
    assert_close(out, F.scaled_dot_product_attention(q, k, v))


def test_the_chapter_check_passes_and_counts_the_tiles_the_loop_computes(monkeypatch):
    ns = run_snippet("fast_attention/blocked_attention.py")
    calls = []
    real_maximum = torch.maximum
    monkeypatch.setattr(torch, "maximum", lambda *a: calls.append(1) or real_maximum(*a))
    for is_causal in (False, True):
        calls.clear()
        # one torch.maximum per tile
        blocked_attention(ns["q"], ns["k"], ns["v"], 16, 16, is_causal)
        assert len(calls) == ns["tiles"](ns["L"], 16, is_causal)
    assert ns["tiles"](64, 16, True) == 10 and ns["tiles"](64, 16, False) == 16
    assert ns["L"] == 64  # Figure 9-1's alt text: a 64 × 64 grid of scores in 16 × 16 tiles


def test_the_printed_differences_are_float32_rounding_not_zero_and_a_missing_rescale_is_not():
    """Section 9.2 and exercise 2: the largest differences from SDPA are not all 0 (other order of
    additions) but below 0.000001; without `* scale` on `acc` the output is far off."""
    out = io.StringIO()
    ns = run_snippet("fast_attention/blocked_attention.py", stdout=out)
    diffs = [float(line.rpartition("= ")[2]) for line in out.getvalue().splitlines()[:6]]
    assert len(diffs) == 6 and max(diffs) <= 1e-6
    q, k, v = ns["q"], ns["k"], ns["v"]
    assert (ns["ours"] - ns["ref"]).abs().max() > 0  # not bit for bit (the last case)
    source = (ROOT / "snippets/fast_attention/blocked_attention.py").read_text()
    assert source.count("acc = acc * scale + ") == 1
    broken = {}
    exec(compile(source.replace("acc = acc * scale + ", "acc = acc + "), "broken", "exec"), broken)
    wrong = broken["blocked_attention"](q, k, v, 16, 16) - F.scaled_dot_product_attention(q, k, v)
    assert wrong.abs().max() > 0.1


# --- 8.3 peak memory
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def memory():
    """The memory script's variables, and what it printed."""
    out = io.StringIO()
    ns = run_snippet("fast_attention/memory.py", stdout=out)
    return ns, out.getvalue()


def test_naive_peak_holds_the_score_matrix_and_blocked_peak_stays_far_below_it(memory):
    ns, _ = memory
    lengths, peak = ns["lengths"], ns["peak"]
    for i, L in enumerate(lengths):
        score_matrix = ns["H"] * L * L * 4
        assert peak["naive"][i] >= score_matrix  # the scores, then their softmax
        if L >= 1024:
            assert peak["blocked"][i] < score_matrix / 4
    assert peak["blocked"][-1] < ns["H"] * lengths[-1] ** 2 * 4 / 8
    assert peak["naive"][-1] / peak["naive"][0] > 30  # about L² from 256 to 2048: 64x
    assert 1.5 < peak["naive"][-1] / (ns["H"] * lengths[-1] ** 2 * 4) < 2.5  # about two matrices
    assert peak["blocked"][-1] / peak["blocked"][0] < 8  # about L: the output and a few tiles
    # "PyTorch's kernel is blocked too, and behaves the same way"
    assert peak["sdpa"][-1] < ns["H"] * lengths[-1] ** 2 * 4 / 8
    assert peak["sdpa"][-1] < peak["naive"][-1] / 8


def test_memory_block_prints_the_formula_beside_the_measured_peaks(memory):
    ns, printed = memory
    mib = 2**20
    H, block = ns["H"], ns["block"]
    expected = [
        f"one tile of scores per head, {H} heads: {H * block * block * 4 / mib:g} MiB in all"
    ]
    expected += [
        f"L={L:>4}: scores {4 * L * L * 4 // mib:>2} MiB; peak naive {naive / mib:.1f}, "
        f"blocked {blocked / mib:.1f}, SDPA {sdpa / mib:.1f} MiB"
        for L, naive, blocked, sdpa in zip(ns["lengths"], *ns["peak"].values(), strict=True)
    ]
    assert printed.splitlines() == expected


@needs_2_5
def test_create_block_mask_builds_the_full_mask_before_reducing_it_to_tiles(monkeypatch):
    """Section 9.6: eager create_block_mask evaluates the rule at every (q, kv) pair: a bool mask
    and the int64 q_idx - kv_idx of the sliding window, about 10 bytes a pair (640 MiB at 8192)."""
    from torch.nn.attention.flex_attention import create_block_mask

    from snippets.fast_attention import memory
    from snippets.fast_attention.masks import sliding_window

    monkeypatch.setattr(memory, "device", "cpu")  # the profiler's count, on any machine
    L = 8192
    peak = memory.peak_bytes(
        lambda: create_block_mask(sliding_window(64), None, None, L, L, device="cpu")
    )
    assert 8 * L * L <= peak <= 12 * L * L
    assert abs(peak / 2**20 - 640) < 64  # the page says about 640 MiB


# --- 8.4 which kernel
# ---------------------------------------------------------------------------------------------


@needs_sdpa_kernel
def test_every_backend_that_runs_agrees_with_the_default_on_any_device():
    ns = run_snippet("fast_attention/kernels.py")
    assert ns["diff"] < 1e-5  # the math backend: float32 rounding
    assert len(ns["diffs"]) >= 1  # at least one fused backend runs on every device
    assert max(ns["diffs"]) < 1e-4
    if ns["device"] == "cpu":  # the page: the one fused backend that runs is the default itself
        assert [d.item() for d in ns["diffs"]] == [0.0]


@needs_sdpa_kernel
def test_on_the_cpu_the_default_is_the_cpu_flash_kernel_and_efficient_and_cudnn_cannot_run():
    """What the page says of the CPU, seen in the profiler (the page's code runs on any device)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile

    q, k, v = torch.randn(3, 1, 4, 256, 64)
    with profile(activities=[ProfilerActivity.CPU]) as trace:
        F.scaled_dot_product_attention(q, k, v)
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in {
        event.name for event in trace.events()
    }
    for backend in SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION:
        with sdpa_kernel(backend), pytest.raises(RuntimeError):
            F.scaled_dot_product_attention(q, k, v)


# --- 8.5 MQA, GQA, MLA
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_cache_numbers_match_chapter_7s_real_kv_cache(n_kv_heads):
    torch.manual_seed(0)
    model = TinyDecoder(16, d_model=32, n_heads=4, n_layers=2, n_kv_heads=n_kv_heads).eval()
    cache = KVCache()
    with torch.no_grad():
        model(torch.randint(1, 16, (3, 9)), cache=cache)
    kind = {4: "MHA", 2: "GQA", 1: "MQA"}[n_kv_heads]
    per_token = cache_numbers(kind, H=4, d_k=8, G=n_kv_heads)
    # layers x B x L x numbers x float32 bytes
    nbytes = sum(t.numel() * t.element_size() for t in [*cache.k, *cache.v])
    assert nbytes == 2 * 3 * 9 * per_token * 4


def test_mla_caches_as_much_as_gqa_with_two_and_a_quarter_groups():
    # DeepSeek-V2 (arXiv 2405.04434), section 2.1.4: d_c = 4 d_k, d_r = d_k / 2, "equal to GQA with
    # only 2.25 groups"
    assert cache_numbers("MLA", 128, 128, d_c=512, d_r=64) == 2.25 * cache_numbers(
        "GQA", 128, 128, G=1
    )
    with pytest.raises(ValueError, match="unknown kind"):
        cache_numbers("MHB", 8, 16)


@needs_2_5
@pytest.mark.parametrize("groups", [8, 2, 1])
def test_enable_gqa_equals_repeat_interleave_and_blocked_attention(groups, device, dtype):
    q, _, _ = qkv(2, 8, 10, 10, 16, device, dtype)
    _, k, v = qkv(2, groups, 10, 10, 16, device, dtype, seed=1)
    expected = F.scaled_dot_product_attention(
        q, k.repeat_interleave(8 // groups, 1), v.repeat_interleave(8 // groups, 1)
    )
    assert_close(F.scaled_dot_product_attention(q, k, v, enable_gqa=True), expected)
    assert_close(
        blocked_attention(
            q, k.repeat_interleave(8 // groups, 1), v.repeat_interleave(8 // groups, 1), 4, 4
        ),
        expected,
    )


def test_mla_read_from_the_latent_equals_expanded_k_and_v():
    ns = run_snippet("fast_attention/mla.py")
    assert_close(ns["folded"], ns["out"])
    assert ns["diff"] <= 1e-6  # the page: "agree to within 0.000001"
    assert ns["real"] == ns["formula"] == ns["B"] * ns["L"] * (ns["d_c"] + ns["d_r"]) * 4


# --- 8.6 masks and FlexAttention
# ----------------------------------------------------------------------------------


@needs_2_5
@eager_flex
def test_plain_masks_are_sliding_window_and_documents():
    ns = run_snippet("fast_attention/masks.py")
    sliding, document, doc = ns["sliding"].cpu(), ns["document"].cpu(), ns["doc"].cpu()
    for i in range(8):
        for j in range(8):
            assert bool(sliding[i, j]) == (0 <= i - j < 3)
            assert bool(document[i, j]) == (j <= i and doc[i] == doc[j])


@needs_2_5
@eager_flex
@pytest.mark.parametrize("L", [8, 200])
def test_flex_mask_mods_equal_the_plain_masks(L, device):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    from snippets.fast_attention.masks import documents, sliding_window

    q, k, v = qkv(1, 2, L, L, 8, device, torch.float32)
    i, j = torch.arange(L, device=device)[:, None], torch.arange(L, device=device)
    doc = torch.arange(L, device=device) * 3 // L  # three documents
    for mod, mask in [
        (sliding_window(5), (j <= i) & (i - j < 5)),
        (documents(doc), (j <= i) & (doc[:, None] == doc)),
    ]:
        block_mask = create_block_mask(mod, None, None, L, L, device=device)
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert_close(flex_attention(q, k, v, block_mask=block_mask), expected)


@needs_2_5
@eager_flex
def test_flex_alibi_equals_chapter_6s_alibi_bias(device):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    from snippets.fast_attention.masks import alibi, sliding_window

    H, L = 8, 12
    q, k, v = qkv(2, H, L, L, 4, device, torch.float32)
    slopes = 2 ** (-8 * torch.arange(1, H + 1, device=device) / H)
    assert_close(
        slopes.cpu(), alibi_slopes(H).to(slopes.dtype)
    )  # the page's slopes are chapter 6's
    causal = create_block_mask(sliding_window(L), None, None, L, L, device=device)
    flex = flex_attention(q, k, v, score_mod=alibi(slopes), block_mask=causal)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=alibi_bias(H, L, device=device))
    assert_close(flex, expected)


# --- exercises
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("split", [1, 13, 39])
def test_merging_two_partial_results_in_either_order_is_attention(split, device, dtype):
    q, k, v = qkv(1, 2, 3, 40, 8, device, dtype)
    a = partial(q, k[:, :, :split], v[:, :, :split])
    b = partial(q, k[:, :, split:], v[:, :, split:])
    expected = F.scaled_dot_product_attention(q, k, v)
    for x, y in [(a, b), (b, a)]:
        _, total, acc = merge(x, y)
        assert_close(acc / total, expected)


def test_exercises_print_differences_at_float32_rounding():
    out = io.StringIO()
    run_snippet("fast_attention/exercises.py", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert all(float(line.rpartition("= ")[2]) <= 1e-6 for line in lines)


# --- figures
# --------------------------------------------------------------------------------------------


def test_flash_figure_shows_the_running_state_of_the_chapters_blocked_loop():
    """Figure 9-3's m, ℓ and acc after the last tile give blocked_attention's output row."""
    from figures.fast_attention import running_state

    ns = run_snippet("fast_attention/blocked_attention.py")
    q, k, v = (ns[name].float().cpu() for name in ("q", "k", "v"))
    states = running_state(q, k, v, 16)
    assert len(states) == ns["L"] // 16
    m, total, acc, _ = states[-1]
    scores = k[0, 0] @ q[0, 0, 0] / q.shape[-1] ** 0.5
    assert m == pytest.approx(scores.max().item())
    assert_close(acc / total, blocked_attention(q, k, v, 16, 16)[0, 0, 0])


def test_gqa_figure_pairs_heads_as_repeat_interleave_copies_them():
    """Figure 9-4: query head h reads K/V head h // (H // G), the copy repeat_interleave makes."""
    H = 8
    for G in (8, 2, 1):
        k = torch.arange(G).view(1, G, 1, 1).float()
        copies = k.repeat_interleave(H // G, dim=1).flatten().long().tolist()
        assert copies == torch.arange(G).repeat_interleave(H // G).tolist()
        assert copies == [h // (H // G) for h in range(H)]
