"""Chapter 8 (docs/decoding.{zh,en}.md): snippets/decoding/*, checked against PyTorch."""

import io

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

from qkvsite.dialect import version_tuple
from snippets.decoding.tiny_decoder import CausalSelfAttention, KVCache, TinyDecoder, decoder_mask
from tests.conftest import run_snippet

NEW_TORCH = version_tuple(torch.__version__) >= (2, 3)
needs_attention_bias = pytest.mark.skipif(
    not NEW_TORCH, reason="torch.nn.attention.bias appeared in torch 2.3"
)


@pytest.fixture(scope="module")
def chapter():
    """Variables of the chapter's decoding script after it ran (timing included)."""
    return run_snippet("decoding/tiny_decoder.py")


def qkv(L, S, device, dtype, d=8, seed=0):
    torch.manual_seed(seed)
    return (
        torch.randn(1, 2, L, d, dtype=dtype).to(device),
        torch.randn(1, 2, S, d, dtype=dtype).to(device),
        torch.randn(1, 2, S, d, dtype=dtype).to(device),
    )


# --- 8.4 the alignment of the causal mask --------------------------------------------


@needs_attention_bias
@pytest.mark.parametrize("L, S", [(3, 7), (1, 5), (4, 4)])
def test_is_causal_true_is_causal_upper_left(L, S, device, dtype):
    from torch.nn.attention.bias import causal_upper_left

    q, k, v = qkv(L, S, device, dtype)
    assert_close(
        F.scaled_dot_product_attention(q, k, v, is_causal=True),
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal_upper_left(L, S)),
    )


@needs_attention_bias
@pytest.mark.parametrize("L, S", [(3, 7), (1, 5), (4, 4), (2, 9)])
def test_bottom_right_mask_equals_causal_lower_right_and_the_full_computation(L, S, device, dtype):
    from torch.nn.attention.bias import causal_lower_right

    torch.manual_seed(0)
    q_all = torch.randn(1, 2, S, 8, dtype=dtype).to(device)
    _, k, v = qkv(L, S, device, dtype)
    q = q_all[:, :, -L:]
    full = F.scaled_dot_product_attention(q_all, k, v, is_causal=True)[:, :, -L:]
    ours = F.scaled_dot_product_attention(q, k, v, attn_mask=decoder_mask(L, S, device=device))
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(L, S))
    assert_close(ours, full)
    assert_close(theirs, full)


def test_is_causal_true_with_one_query_sees_only_the_first_key(device):
    q, k, _ = qkv(1, 6, device, torch.float32)
    eye = torch.eye(6, device=device).expand(1, 2, 6, 6)
    weights = F.scaled_dot_product_attention(q, k, eye, is_causal=True)
    assert torch.equal((weights > 0)[0, :, 0].cpu(), torch.tensor([[True] + [False] * 5] * 2))


def test_the_alignments_agree_when_queries_and_keys_are_the_same_tokens(device, dtype):
    q, k, v = qkv(5, 5, device, dtype)
    assert_close(
        F.scaled_dot_product_attention(q, k, v, is_causal=True),
        F.scaled_dot_product_attention(q, k, v, attn_mask=decoder_mask(5, 5, device=device)),
    )


def test_chapter_trap_is_wrong_and_both_fixes_are_right():
    ns = run_snippet("decoding/causal_alignment.py")
    q, k, v, reference = ns["q"], ns["k"], ns["v"], ns["reference"]
    assert not torch.allclose(
        F.scaled_dot_product_attention(q, k, v, is_causal=True), reference, atol=1e-3
    )
    assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=ns["allowed"]), reference)
    assert torch.equal(ns["lower_right"], ns["allowed"].cpu())


def test_figure_8_3_no_new_query_sees_the_whole_cache_top_left_every_one_does_bottom_right():
    """Figure 8-3's alt text: two 3 x 7 masks, 4 cached tokens and 3 new ones."""
    ns = run_snippet("decoding/causal_alignment.py")
    upper, lower, cached = ns["upper_left"], ns["lower_right"], ns["L_k"] - ns["L_q"]
    assert upper.shape == lower.shape == (3, 7) and cached == 4
    assert not upper[:, :cached].all(dim=1).any()  # top left: each new query misses cached keys
    assert lower[:, :cached].all()  # bottom right: the whole cache, and the new tokens up to itself
    assert torch.equal(lower[:, cached:], torch.ones(3, 3, dtype=torch.bool).tril())


# --- decoder_mask and the attention layer ----------------------------------------------


def test_padded_keys_are_hidden_and_no_row_is_empty():
    pad = torch.tensor([[False, False, False, False, False], [True, True, False, False, False]])
    mask = decoder_mask(2, 5, pad)  # 2 new queries on top of 3 cached tokens
    assert mask.shape == (2, 1, 2, 5)
    assert bool(mask.any(dim=-1).all())
    assert torch.equal(mask[0, 0], decoder_mask(2, 5))
    assert torch.equal(
        mask[1, 0],
        torch.tensor([[False, False, True, True, False], [False, False, True, True, True]]),
    )
    only_pad = decoder_mask(2, 2, torch.tensor([[True, False]]))
    # the pad query sees itself
    assert torch.equal(only_pad[0, 0], torch.tensor([[True, False], [False, True]]))


def test_causal_self_attention_equals_nn_multihead_attention(device, dtype):
    torch.manual_seed(0)
    E, H, L = 16, 4, 6
    ours = CausalSelfAttention(E, H, H).to(device, dtype)
    mha = nn.MultiheadAttention(E, H, bias=False, batch_first=True).to(device, dtype)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([ours.q.weight, ours.k.weight, ours.v.weight]))
        mha.out_proj.weight.copy_(ours.o.weight)
    x = torch.randn(2, L, E, dtype=dtype).to(device)
    blocked = ~decoder_mask(L, L, device=device)  # nn.MultiheadAttention: True = may not attend
    with torch.no_grad():
        assert_close(ours(x, decoder_mask(L, L, device=device)), mha(x, x, x, attn_mask=blocked)[0])


@pytest.mark.skipif(
    version_tuple(torch.__version__) < (2, 5), reason="enable_gqa appeared in torch 2.5"
)
@pytest.mark.parametrize("n_kv_heads", [1, 2])
def test_grouped_query_attention_equals_sdpa_enable_gqa(n_kv_heads, device, dtype):
    torch.manual_seed(0)
    E, H, L = 16, 4, 5
    attn = CausalSelfAttention(E, H, n_kv_heads).to(device, dtype)
    x = torch.randn(2, L, E, dtype=dtype).to(device)

    def heads(t, n):
        return t.view(2, L, n, E // H).transpose(1, 2)

    with torch.no_grad():
        q, k, v = heads(attn.q(x), H), heads(attn.k(x), n_kv_heads), heads(attn.v(x), n_kv_heads)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        expected = attn.o(out.transpose(1, 2).reshape(2, L, E))
        assert_close(attn(x, decoder_mask(L, L, device=device)), expected)


def test_tiny_decoder_looks_up_its_embeddings_with_nn_embedding():
    model = TinyDecoder(10)
    assert isinstance(model.tok, nn.Embedding) and isinstance(model.pos, nn.Embedding)
    assert model.pos.num_embeddings == model.max_len == 64


# --- 8.1 and 8.2 generation and teacher forcing ----------------------------------------------


def test_teacher_forcing_gives_the_logits_of_every_step(chapter):
    P = chapter["prompt"].shape[1]
    assert_close(chapter["all_logits"][:, P - 1 : -1], chapter["step_logits"], atol=1e-5, rtol=1e-5)


def test_greedy_choices_have_a_clear_margin_so_the_printed_words_are_stable(chapter):
    top2 = chapter["step_logits"].topk(2, dim=-1).values
    assert float((top2[..., 0] - top2[..., 1]).min()) > 1e-3


def test_teacher_forcing_loss_is_cross_entropy_over_every_position(chapter):
    target = chapter["target"]
    with torch.no_grad():
        logits = chapter["model"](target[:, :-1])  # the script reuses the name `logits` later
    by_hand = -torch.log_softmax(logits[0], dim=-1)[torch.arange(6), target[0, 1:]].mean()
    assert_close(chapter["loss"], by_hand)


def test_later_tokens_do_not_change_earlier_logits(device, dtype):
    torch.manual_seed(0)
    model = TinyDecoder(12).to(device, dtype).eval()
    tokens = torch.randint(12, (2, 9)).to(device)
    changed = tokens.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 12
    with torch.no_grad():
        assert_close(model(changed)[:, :5], model(tokens)[:, :5])


# --- 8.3 the KV cache -----------------------------------------------------------


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_cached_decoding_matches_full_recomputation_at_every_step(n_kv_heads, device, dtype):
    torch.manual_seed(0)
    model = TinyDecoder(20, n_kv_heads=n_kv_heads).to(device, dtype).eval()
    tokens = torch.randint(20, (3, 4)).to(device)
    cache = KVCache()
    tol = {"atol": 1e-5, "rtol": 1e-5} if dtype == torch.float32 else {}
    with torch.no_grad():
        logits = model(tokens, cache=cache)
        assert_close(logits, model(tokens), **tol)
        for _ in range(8):
            tokens = torch.cat([tokens, logits[:, -1:].argmax(-1)], dim=1)
            logits = model(tokens[:, -1:], cache=cache)
            assert_close(logits, model(tokens)[:, -1:], **tol)
    assert len(cache) == tokens.shape[1]
    assert cache.k[0].shape == (3, n_kv_heads, tokens.shape[1], 8)


def test_cache_bytes_equal_the_formula_and_shrink_with_fewer_kv_heads(chapter):
    sizes = {}
    for n_kv in [4, 2, 1]:
        model = TinyDecoder(16, n_kv_heads=n_kv).eval()
        cache = KVCache()
        with torch.no_grad():
            model(torch.zeros(2, 10, dtype=torch.long), cache=cache)
        sizes[n_kv] = sum(t.numel() * t.element_size() for t in cache.k + cache.v)
        assert sizes[n_kv] == 2 * len(model.blocks) * 2 * n_kv * 10 * 8 * 4
        assert sizes[n_kv] == sum(t.untyped_storage().nbytes() for t in cache.k + cache.v)
    assert sizes[4] == 2 * sizes[2] == 4 * sizes[1]


def test_chapter_cache_formula_counts_k_and_v_of_every_layer(chapter):
    attn, tokens = chapter["model"].blocks[0].attn, chapter["tokens"]
    per_number = 4  # float32
    n_layers = len(chapter["model"].blocks)
    assert chapter["token_bytes"] == 2 * n_layers * attn.H * attn.d_k * per_number
    assert chapter["held"] == tokens.shape[1] * chapter["token_bytes"]
    assert chapter["big"] * 4096 == 2 * 2**30  # 2 GiB, as FAQ Q15 computes for G = H


def test_appending_a_token_keeps_the_cached_rows_and_they_equal_a_full_recomputation(chapter):
    """Figure 8-1's values: "cat dog" cached, then "sat" appended."""
    model, ids = chapter["model"], chapter["ids"]
    assert torch.equal(chapter["grown_k"][:, :, :2], chapter["prompt_k"])
    assert torch.equal(chapter["grown_v"][:, :, :2], chapter["prompt_v"])
    full = KVCache()
    with torch.no_grad():
        model(ids(["cat", "dog", "sat"]), cache=full)
    assert_close(full.k[0], chapter["grown_k"], atol=1e-6, rtol=1e-5)
    assert_close(full.v[0], chapter["grown_v"], atol=1e-6, rtol=1e-5)


def test_kv_cache_is_faster_at_the_largest_length(chapter):
    """What the measured output must show; the other lengths vary between machines and runs."""
    per_token = chapter["per_token"]
    assert len(per_token["full"]) == len(per_token["cached"]) == len(chapter["lengths"])
    assert per_token["cached"][-1] < per_token["full"][-1]


# --- 8.5 left padding -----------------------------------------------------------


def test_left_padded_batch_matches_each_prompt_alone(device, dtype):
    torch.manual_seed(0)
    model = TinyDecoder(16).to(device, dtype).eval()
    prompts = [[3, 4, 5, 6, 7], [8, 9], [10, 11, 12]]
    P = 5
    batch = torch.tensor([[0] * (P - len(p)) + p for p in prompts], device=device)
    pad = batch == 0
    positions = ((~pad).cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        logits = model(batch, positions=positions, pad=pad)
        for b, p in enumerate(prompts):
            alone = model(torch.tensor([p], device=device))
            assert_close(logits[b : b + 1, P - len(p) :], alone, atol=1e-5, rtol=1e-5)


def copy(cache):
    """A new KVCache holding the same tensors: appending to it leaves ``cache`` as it was."""
    new = KVCache()
    new.k, new.v = list(cache.k), list(cache.v)
    return new


def test_a_one_token_step_needs_no_causal_mask_but_a_left_padded_batch_still_needs_its_padding_mask(
    device, dtype
):
    # sections 8.4 and 8.5: with L = 1 the causal part of the mask hides nothing; the padding part
    # still does
    torch.manual_seed(0)
    model = TinyDecoder(16).to(device, dtype).eval()
    prompts = [[3, 4, 5, 6, 7], [8, 9], [10, 11, 12]]
    P, new = 5, [13, 14, 15]
    batch = torch.tensor([[0] * (P - len(p)) + p for p in prompts], device=device)
    pad = batch == 0
    positions = ((~pad).cumsum(-1) - 1).clamp(min=0)
    next_token = torch.tensor(new, device=device)[:, None]
    with torch.no_grad():
        cache = KVCache()
        model(batch, positions=positions, pad=pad, cache=cache)
        step_pad = torch.cat([pad, torch.zeros_like(next_token, dtype=torch.bool)], dim=1)
        masked = model(next_token, positions[:, -1:] + 1, step_pad, copy(cache))
        # (1, S) mask: all True
        unmasked = model(next_token, positions[:, -1:] + 1, None, copy(cache))
        assert bool(decoder_mask(1, P + 1, device=device).all())
        for b, (p, t) in enumerate(zip(prompts, new, strict=True)):
            alone = model(torch.tensor([[*p, t]], device=device))[:, -1:]
            assert_close(masked[b : b + 1], alone, atol=1e-5, rtol=1e-5)
            # this row has padding: without the padding mask the new token attends to it
            if len(p) < P:
                assert not torch.allclose(unmasked[b : b + 1], alone, atol=1e-3)
            else:
                assert_close(unmasked[b : b + 1], alone, atol=1e-5, rtol=1e-5)


def test_figure_8_4_a_causal_triangle_and_a_padded_prompt_that_skips_its_padding(chapter):
    """Figure 8-4's alt text: two 4 x 4 masks; "a dog" has two padded columns, its padded rows
    see only themselves, and the position ids of its real tokens count from 0."""
    pad, positions = chapter["pad"].cpu(), chapter["positions"].cpu()
    mask = chapter["decoder_mask"](4, 4, chapter["pad"])[:, 0].cpu()
    assert mask.shape == (2, 4, 4) and pad[1].tolist() == [True, True, False, False]
    assert torch.equal(mask[0], torch.ones(4, 4, dtype=torch.bool).tril())
    assert not mask[1, 2:, :2].any()  # the real tokens never see the padding
    assert torch.equal(mask[1, :2], torch.eye(4, dtype=torch.bool)[:2])  # padding sees itself
    assert positions[1, 2:].tolist() == [0, 1]


def test_forgetting_position_ids_or_the_padding_mask_changes_the_result(chapter):
    alone = chapter["alone"]
    checks = {
        name: torch.allclose(logits[1:, -2:], alone, atol=1e-5)
        for name, logits in chapter["checks"].items()
    }
    assert list(checks.values()) == [False, False, True]


def test_batched_generation_with_a_cache_equals_one_prompt_at_a_time(chapter):
    generate, generate_batch, model = (
        chapter["generate"],
        chapter["generate_batch"],
        chapter["model"],
    )
    device = chapter["device"]
    prompts = [[1, 3, 6], [2, 4, 9, 11, 5], [12]]
    P = 5
    batch = torch.tensor([[0] * (P - len(p)) + p for p in prompts], device=device)
    together = generate_batch(model, batch, batch == 0, steps=4)
    for row, p in zip(together, prompts, strict=True):
        alone, _ = generate(model, torch.tensor([p], device=device), steps=4)
        assert torch.equal(row[P - len(p) :], alone[0])


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda m: m(torch.zeros(1, 65, dtype=torch.long)),
            ValueError,
            "position 64 is past the position table",
        ),
        (
            lambda m: m(torch.zeros(4, dtype=torch.long)),
            ValueError,
            "tokens must be (B, L), L >= 1, got (4,)",
        ),
        (lambda m: m(torch.zeros(2, 0, dtype=torch.long)), ValueError, "got (2, 0)"),
        (
            lambda m: m(torch.zeros(2, 3)),
            TypeError,
            "tokens must be integer ids, got torch.float32",
        ),
        (
            lambda m: m(
                torch.zeros(2, 3, dtype=torch.long), positions=torch.zeros(2, 4, dtype=torch.long)
            ),
            ValueError,
            "positions (2, 4) must match tokens (2, 3)",
        ),
        (
            lambda m: m(
                torch.zeros(2, 3, dtype=torch.long), pad=torch.zeros(2, 4, dtype=torch.bool)
            ),
            ValueError,
            "pad (2, 4) must be (B, L_k) = (2, 3): 0 cached + 3 new tokens",
        ),
        (
            lambda m: m(torch.zeros(1, 3, dtype=torch.long), positions=torch.tensor([[0, 1, 70]])),
            ValueError,
            "position 70 is past the position table: max_len = 64 rows",
        ),
        (lambda m: TinyDecoder(10, d_model=30, n_heads=4), ValueError, "d_model = 30, n_heads = 4"),
        (lambda m: TinyDecoder(10, n_heads=4, n_kv_heads=3), ValueError, "n_kv_heads = 3"),
    ],
    ids=[
        "too-long",
        "1d-tokens",
        "empty",
        "float-tokens",
        "positions-shape",
        "pad-shape",
        "position-past-table",
        "heads-do-not-divide",
        "kv-heads-do-not-divide",
    ],
)
def test_bad_input_raises_errors_naming_the_shapes(call, error, message):
    model = TinyDecoder(10).eval()
    with pytest.raises(error) as info:
        call(model)
    assert message in str(info.value)


def test_a_cache_for_another_batch_size_is_refused():
    model = TinyDecoder(10).eval()
    cache = KVCache()
    with torch.no_grad():
        model(torch.zeros(2, 3, dtype=torch.long), cache=cache)
        with pytest.raises(ValueError, match=r"tokens \(3, 1\) but the cache holds 2 sequences"):
            model(torch.zeros(3, 1, dtype=torch.long), cache=cache)


# --- a fully masked row (8.5's note) -------------------------------------------------


def test_a_fully_masked_row_has_no_meaningful_output_which_decoder_mask_never_builds(device):
    """Softmax over -inf is NaN; SDPA returns zeros for such a row (torch 2.13, CPU; FAQ Q10)."""
    assert torch.isnan(torch.softmax(torch.full((4,), float("-inf"), device=device), dim=-1)).all()
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 1, 2, 8).to(device) for _ in range(3))
    empty_row = torch.tensor([[True, True], [False, False]], device=device)
    row = F.scaled_dot_product_attention(q, k, v, attn_mask=empty_row)[0, 0, 1]
    assert bool(torch.isnan(row).all()) or bool((row == 0).all())
    if device == "cpu" and version_tuple(torch.__version__) >= (2, 13):
        assert torch.equal(row, torch.zeros(8))
    pad = torch.tensor([[True, True, False, False]], device=device)  # left padding
    mask = decoder_mask(4, 4, pad)
    assert bool(mask.any(dim=-1).all())  # every row keeps at least its own key
    out = F.scaled_dot_product_attention(
        *(torch.randn(1, 1, 4, 8).to(device) for _ in range(3)), attn_mask=mask
    )
    assert not torch.isnan(out).any()


# --- exercises ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def exercises():
    printed = io.StringIO()
    ns = run_snippet("decoding/exercises.py", stdout=printed)
    return {**ns, "printed": printed.getvalue()}


def test_the_exercises_rebuild_the_chapters_model_and_tokens(chapter, exercises):
    assert torch.equal(exercises["tokens"].cpu(), chapter["tokens"].cpu())
    ours, theirs = exercises["model"].state_dict(), chapter["model"].state_dict()
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[n], theirs[n]) for n in ours)


def test_exercise_1_query_5_sees_keys_0_to_5_bottom_right_and_0_to_1_top_left():
    ns = run_snippet("decoding/causal_alignment.py")
    # query 5 = row 5 - (S - L)
    assert ns["allowed"][1].nonzero().flatten().tolist() == [0, 1, 2, 3, 4, 5]
    assert ns["upper_left"][1].nonzero().flatten().tolist() == [0, 1]
    assert torch.equal(ns["allowed"].cpu(), torch.ones(3, 7, dtype=torch.bool).tril(4))


def use_mask(monkeypatch, model, mask):
    """``model`` builds its masks with ``mask`` instead of decoder_mask. Patched where its class
    looks the name up: a test that imports snippets/ afresh (qkvsite.figures.run_example) makes
    another module of the same file."""
    monkeypatch.setitem(type(model).forward.__globals__, "decoder_mask", mask)


def test_exercise_2_earlier_k_and_v_stay_fixed_only_because_of_the_causal_mask(monkeypatch):

    torch.manual_seed(0)
    model = TinyDecoder(16).eval()
    tokens = torch.randint(1, 16, (1, 7))

    def layer_kv(n_first):
        cache = KVCache()
        with torch.no_grad():
            model(tokens[:, :n_first], cache=cache)
        return cache

    short, long = layer_kv(5), layer_kv(7)
    for layer in range(2):  # causal: the first 5 tokens' K and V are the same in every layer
        assert_close(long.k[layer][:, :, :5], short.k[layer])
        assert_close(long.v[layer][:, :, :5], short.v[layer])

    def see_everything(L, S, pad=None, device=None):
        return torch.ones(L, S, dtype=torch.bool, device=device)

    use_mask(monkeypatch, model, see_everything)
    short, long = layer_kv(5), layer_kv(7)
    assert_close(long.k[0][:, :, :5], short.k[0])  # layer 1: projections of the embeddings
    # layer 2 saw the new tokens
    assert not torch.allclose(long.k[1][:, :, :5], short.k[1], atol=1e-4)


def test_exercise_3_with_right_padding_the_last_column_is_not_the_last_real_token(device):
    torch.manual_seed(0)
    model = TinyDecoder(16).to(device).eval()
    batch = torch.tensor([[1, 3, 6, 9], [2, 4, 0, 0]], device=device)  # "a dog" padded on the right
    pad = batch == 0
    positions = ((~pad).cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        logits = model(batch, positions=positions, pad=pad)
        alone = model(batch[1:, :2])[0, -1]  # what comes after "dog"
    assert_close(logits[1, 1], alone, atol=1e-5, rtol=1e-5)  # the last real token predicts it
    assert not torch.allclose(logits[1, -1], alone, atol=1e-3)  # logits[:, -1] is a <pad> position


@pytest.mark.parametrize("sizes", [[4, 3, 2], [1, 1, 7], [2, 5, 2], [9]])
def test_exercise_4_chunked_prefill_matches_one_pass_for_any_split(sizes, device, dtype):
    torch.manual_seed(0)
    model = TinyDecoder(16, n_kv_heads=2).to(device, dtype).eval()
    tokens = torch.randint(1, 16, (2, 9)).to(device)
    tol = {"atol": 1e-5, "rtol": 1e-5} if dtype == torch.float32 else {}
    cache, start = KVCache(), 0
    with torch.no_grad():
        full = model(tokens)
        for size in sizes:
            assert_close(
                model(tokens[:, start : start + size], cache=cache),
                full[:, start : start + size],
                **tol,
            )
            start += size
    assert len(cache) == 9


def test_exercise_4_chunked_prefill_goes_wrong_with_the_top_left_alignment(monkeypatch, exercises):

    def top_left(L, S, pad=None, device=None):  # what is_causal=True does
        return torch.ones(L, S, dtype=torch.bool, device=device).tril()

    model, tokens, full = exercises["model"], exercises["tokens"], exercises["full"]
    use_mask(monkeypatch, model, top_left)
    cache, start, same = KVCache(), 0, []
    with torch.no_grad():
        for size in [4, 3, 2]:
            logits = model(tokens[:, start : start + size], cache=cache)
            same.append(torch.allclose(logits, full[:, start : start + size], atol=1e-3))
            start += size
    assert same == [True, False, False]  # only the first chunk has L = S


def test_exercise_4_prints_three_chunks_all_matching(exercises):
    assert exercises["printed"].count("same as one pass: True") == 3
    assert "L_q=3, L_k=7" in exercises["printed"]  # section 8.4's case


def test_exercise_5_one_new_token_needs_no_mask_and_is_causal_true_returns_the_first_value(
    device, dtype
):
    torch.manual_seed(0)
    q_all, k, v = (torch.randn(2, 3, 6, 8, dtype=dtype).to(device) for _ in range(3))
    q = q_all[:, :, -1:]
    reference = F.scaled_dot_product_attention(q_all, k, v, is_causal=True)[:, :, -1:]
    assert_close(F.scaled_dot_product_attention(q, k, v), reference)
    assert_close(
        F.scaled_dot_product_attention(q, k, v, attn_mask=decoder_mask(1, 6, device=device)),
        reference,
    )
    assert_close(F.scaled_dot_product_attention(q, k, v, is_causal=True), v[:, :, :1])  # key 0 only


@needs_attention_bias
def test_exercise_5_causal_lower_right_for_one_query_hides_nothing():
    from torch.nn.attention.bias import causal_lower_right

    assert bool(causal_lower_right(1, 6)._materialize().all())


def test_exercise_5_script_prints_that_only_key_0_is_seen(exercises):
    assert "is_causal=True lets it see keys: [0]" in exercises["printed"]
    assert_close(exercises["trap"], exercises["v"][:, :, :1])
