"""Chapter 3 (docs/scaled-dot-product.{zh,en}.md): snippets/scaled_dot_product/*, checked against
PyTorch."""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.testing import assert_close

from snippets.scaled_dot_product.attention import checked_attention, scaled_dot_product_attention
from snippets.scaled_dot_product.checks import check_attention_inputs
from tests.conftest import run_snippet


def run_script(name):
    return run_snippet(f"scaled_dot_product/{name}")


@pytest.fixture(scope="module")
def steps():
    """Variables of the four-step example after it ran."""
    return run_script("four_steps.py")


@pytest.fixture(scope="module")
def why_scale():
    return run_script("why_scale.py")


@pytest.fixture(scope="module")
def masking():
    return run_script("masking.py")


def random(*shape, dtype=torch.float32, device="cpu", seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype).to(device)


# --- the four steps ----------------------------------------------------------


def test_the_one_query_trace_is_chapter_2s_bites_query_scaled_by_sqrt_d_k():
    ns = run_script("one_query.py")
    ch2 = run_snippet("qkv/verb_subject.py")
    # the same query, keys and values as chapter 2's "dog bites man"
    assert_close(ns["q_bites"], ch2["Q"][1])
    assert_close(ns["K"], ch2["K"])
    assert_close(ns["V"], ch2["V"])
    assert_close(ns["scores"], ch2["scores"])
    assert_close(ns["scaled"], ch2["scores"] / math.sqrt(2))
    # scaling makes the weights more even; dog still gets the most
    weights, unscaled = ns["weights"], ch2["weights"]
    assert float(weights.max()) < float(unscaled.max())
    assert float(weights.min()) > float(unscaled.min())
    assert int(weights.argmax()) == int(unscaled.argmax()) == ch2["tokens"].index("dog")
    ref = F.scaled_dot_product_attention(ns["q_bites"][None], ns["K"], ns["V"])[0]
    assert_close(ns["z_bites"], ref)
    assert_close(ns["z_bites"], weights @ ns["V"])


def test_scores_hold_every_query_key_dot_product(steps):
    Q, K, scores = steps["Q"], steps["K"], steps["scores"]
    n = Q.shape[0]
    assert scores.shape == (n, n)
    expected = torch.stack(
        [torch.stack([torch.dot(Q[i], K[j]) for j in range(n)]) for i in range(n)]
    )
    assert_close(scores, expected)


def test_scaled_scores_are_scores_over_sqrt_d_k_in_the_same_order(steps):
    scores, scaled, d_k = steps["scores"], steps["scaled"], steps["d_k"]
    assert type(d_k) is int and d_k == steps["K"].shape[-1]
    assert_close(scaled, scores / math.sqrt(d_k))
    assert torch.equal(scores.argsort(dim=-1), scaled.argsort(dim=-1))
    assert scaled.abs().max() < scores.abs().max()


def test_d_k_pow_half_and_math_sqrt_agree_to_the_last_bit_at_most():
    assert 6**0.5 == math.sqrt(6)  # the page's d_k
    assert all(float(2**i) ** 0.5 == math.sqrt(2**i) for i in range(40))  # 64, 128, ...: exact
    # `**` goes through pow(), math.sqrt is correctly rounded: they never differ by more than one
    # ulp
    assert all(abs(d**0.5 - math.sqrt(d)) <= math.ulp(math.sqrt(d)) for d in range(1, 1 << 16))


def test_math_sqrt_accepts_a_one_element_tensor(device):
    # The source article claims `d_k ** 0.5` is needed because math.sqrt fails on a 0-d tensor.
    assert math.sqrt(torch.tensor(64.0, device=device)) == 8.0


def test_weights_are_a_softmax_over_each_row(steps):
    weights, scaled = steps["weights"], steps["scaled"]
    assert bool((weights > 0).all())
    assert_close(weights.sum(dim=-1), torch.ones(weights.shape[0], device=weights.device))
    assert_close(
        weights, F.softmax(scaled, dim=1)
    )  # dim=-1 is dim=1 here: rows, not "the last row"


def test_output_rows_are_weighted_sums_of_whole_rows_of_v(steps):
    weights, V, output = steps["weights"], steps["V"], steps["output"]
    assert output.shape == (weights.shape[0], V.shape[1])
    for i in range(weights.shape[0]):
        assert_close(output[i], sum(weights[i, j] * V[j] for j in range(V.shape[0])))


def test_four_steps_equal_pytorch_attention(steps):
    Q, K, V = steps["Q"], steps["K"], steps["V"]
    assert_close(steps["output"], F.scaled_dot_product_attention(Q, K, V))


# --- why scale ---------------------------------------------------------------


def dot_product_variances(d_k, n, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(n, d_k, generator=g), torch.randn(n, d_k, generator=g)
    dots = (q * k).sum(dim=-1)
    return dots.var().item(), (dots / math.sqrt(d_k)).var().item()


def test_dot_product_variance_grows_like_d_k_and_scaling_brings_it_to_one(why_scale):
    for d_k, raw, scaled in zip(
        why_scale["d_ks"], why_scale["raw_var"], why_scale["scaled_var"], strict=True
    ):
        assert 0.85 < raw / d_k < 1.15, (d_k, raw)
        assert 0.85 < scaled < 1.15, (d_k, scaled)
        assert scaled == pytest.approx(raw / d_k)  # the same dot products, divided by √d_k


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dot_product_variance_claim_holds_for_other_seeds(seed):
    # var of one product is 1 and its kurtosis is 9, so with 4000 pairs the relative standard error
    # of the variance is at most sqrt(3.5 / 4000) ≈ 0.03: 0.15 is five standard errors.
    for d_k in (4, 64, 1024):
        raw, scaled = dot_product_variances(d_k, 4000, seed)
        assert 0.85 < raw / d_k < 1.15, (d_k, raw)
        assert 0.85 < scaled < 1.15, (d_k, scaled)


def test_unscaled_softmax_saturates_and_its_gradient_vanishes(why_scale):
    d_ks, max_weight, grad = why_scale["d_ks"], why_scale["max_weight"], why_scale["grad_norm"]
    raw_w, raw_g = max_weight["raw"], grad["raw"]
    assert all(a < b for a, b in zip(raw_w, raw_w[1:], strict=False)), raw_w
    assert all(a > b for a, b in zip(raw_g, raw_g[1:], strict=False)), raw_g
    assert raw_w[-1] > 0.9
    assert raw_g[-1] < 1e-3 * grad["scaled"][-1]
    assert len(d_ks) == len(raw_w) == len(raw_g)


def test_scaled_softmax_does_not_depend_on_d_k(why_scale):
    w, g = why_scale["max_weight"]["scaled"], why_scale["grad_norm"]["scaled"]
    assert max(w) - min(w) < 0.05, w
    assert max(g) < 1.5 * min(g), g
    assert min(w) > 1 / why_scale["n_keys"]  # not uniform either


@pytest.mark.parametrize("seed", [1, 2])
def test_saturation_claim_holds_for_other_seeds(seed):
    g = torch.Generator().manual_seed(seed)
    results = {}
    for d_k in (4, 1024):
        q = torch.randn(256, 1, d_k, generator=g)
        k = torch.randn(256, 16, d_k, generator=g)
        dots = (q * k).sum(dim=-1)
        for name, s in (("raw", dots), ("scaled", dots / math.sqrt(d_k))):
            p = torch.softmax(s, dim=-1)
            # Frobenius norm of softmax's Jacobian diag(p) - p pᵀ, per row
            jac = torch.diag_embed(p) - p[..., :, None] * p[..., None, :]
            results[name, d_k] = (
                p.max(dim=-1).values.mean().item(),
                jac.norm(dim=(-2, -1)).median().item(),
            )
    assert results["raw", 1024][0] > 0.9 > 0.5 > results["scaled", 1024][0]
    assert results["raw", 1024][1] < 1e-3 * results["scaled", 1024][1]
    assert abs(results["scaled", 4][1] - results["scaled", 1024][1]) < 0.3 * results["scaled", 4][1]


def test_softmax_gradient_is_the_jacobian_times_the_upstream_gradient(device, dtype):
    s = random(5, 7, dtype=dtype, device=device).requires_grad_()
    u = random(5, 7, dtype=dtype, device=device, seed=1)
    p = torch.softmax(s, dim=-1)
    (p * u).sum().backward()
    p = p.detach()
    jac = torch.diag_embed(p) - p[..., :, None] * p[..., None, :]  # ∂p_i/∂s_j = p_i(δ_ij − p_j)
    assert_close(s.grad, (jac.transpose(-2, -1) @ u[..., None]).squeeze(-1))


# --- why softmax -------------------------------------------------------------


def test_softmax_passes_a_gradient_to_every_score():
    ns = run_script("why_softmax.py")
    # the temperature loop reset the gradient, so recompute it for T = 1
    scores, u = ns["scores"], ns["u"]
    scores.grad = None
    (torch.softmax(scores, dim=-1) * u).sum().backward()
    assert bool((scores.grad != 0).all())
    # weights always sum to 1
    assert_close(scores.grad.sum(), torch.zeros((), device=scores.device))


def test_argmax_one_hot_has_no_gradient_path(device):
    scores = random(4, device=device).requires_grad_()
    hard = F.one_hot(scores.argmax(), num_classes=4).to(scores.dtype)
    assert not hard.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        hard.sum().backward()


def test_softmax_gradient_vanishes_as_temperature_goes_to_zero(device):
    scores = torch.tensor([2.0, 1.0, 0.5, -1.0], device=device, requires_grad=True)
    u = torch.tensor([1.0, -2.0, 0.5, 3.0], device=device)
    norms = []
    for T in (1.0, 0.3, 0.1, 0.05):
        scores.grad = None
        weights = torch.softmax(scores / T, dim=-1)
        (weights * u).sum().backward()
        norms.append(scores.grad.norm().item())
    assert all(a > b for a, b in zip(norms, norms[1:], strict=False)), norms
    assert norms[-1] < 1e-5 * norms[0]
    assert_close(weights, F.one_hot(scores.argmax(), 4).to(weights.dtype), atol=1e-6, rtol=0)


# --- masks -------------------------------------------------------------------


def test_padding_mask_gives_padded_keys_zero_weight(masking):
    weights, pad = masking["pad_weights"], masking["pad"]
    assert bool((weights.masked_select(pad[:, None, :].expand_as(weights)) == 0).all())
    assert_close(weights.sum(dim=-1), torch.ones(weights.shape[:-1], device=weights.device))


def test_causal_mask_matches_pytorch_is_causal(masking):
    weights, q, k, v = masking["causal_weights"], masking["q"], masking["k"], masking["v"]
    assert bool((weights.triu(diagonal=1) == 0).all())
    assert_close(weights @ v[0], F.scaled_dot_product_attention(q[0], k[0], v[0], is_causal=True))


def test_fully_masked_row_is_nan_with_minus_inf_and_uniform_with_minus_1e9(device, dtype):
    row = random(2, 5, dtype=dtype, device=device)
    hide = torch.ones(2, 5, dtype=torch.bool, device=device)
    assert bool(torch.softmax(row.masked_fill(hide, float("-inf")), dim=-1).isnan().all())
    uniform = torch.softmax(row.masked_fill(hide, -1e9), dim=-1)
    assert_close(uniform, torch.full_like(uniform, 0.2))


def test_page_example_fully_masked_row_and_a_row_with_one_key_hidden(masking):
    # the FAQ's Q10 shows the fully_masked and one_key_hidden sections together
    row, with_inf, with_big = masking["row"], masking["with_inf"], masking["with_big"]
    hide_all = masking["hide_all"]
    assert bool(torch.softmax(row.masked_fill(hide_all, float("-inf")), dim=-1).isnan().all())
    assert_close(
        torch.softmax(row.masked_fill(hide_all, -1e9), dim=-1), torch.full_like(row, 1 / 3)
    )
    assert with_inf[0, 0] == 0 and with_big[0, 0] == 0
    assert_close(with_inf, with_big)
    # the visible keys, renormalised
    assert_close(with_inf[0, 1:], torch.softmax(row[0, 1:], dim=-1))


def test_minus_1e9_agrees_with_minus_inf_unless_a_whole_row_is_masked(device, dtype):
    scores = random(4, 4, dtype=dtype, device=device)
    # causal: every row keeps a key
    hide = torch.ones(4, 4, dtype=torch.bool, device=device).triu(1)
    with_inf = torch.softmax(scores.masked_fill(hide, float("-inf")), dim=-1)
    assert_close(with_inf, torch.softmax(scores.masked_fill(hide, -1e9), dim=-1))
    hide[3] = True  # now the last row has no key left
    assert bool(torch.softmax(scores.masked_fill(hide, float("-inf")), dim=-1)[3].isnan().all())
    uniform = torch.softmax(scores.masked_fill(hide, -1e9), dim=-1)[3]
    assert_close(uniform, torch.full_like(uniform, 0.25))


def test_minus_1e9_overflows_float16_but_not_minus_inf_or_finfo_min(device):
    half = random(1, 3, device=device).half()
    hide = torch.tensor([[False, True, False]], device=device)
    with pytest.raises(
        RuntimeError, match="cannot be converted to type c10::Half without overflow"
    ):
        half.masked_fill(hide, -1e9)
    for fill in (float("-inf"), torch.finfo(torch.float16).min):
        weights = torch.softmax(half.masked_fill(hide, fill).float(), dim=-1)
        assert weights[0, 1] == 0 and not weights.isnan().any()
    # bfloat16 has float32's range: -1e9 fits (rounded)
    assert half.bfloat16().masked_fill(hide, -1e9)[0, 1] < -9e8


def the_same_attention_by_hand(mha, query, key, value, keep):
    """nn.MultiheadAttention (one head, no bias) as explicit projections + F.sdpa."""
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    out = F.scaled_dot_product_attention(query @ w_q.T, key @ w_k.T, value @ w_v.T, attn_mask=keep)
    return out @ mha.out_proj.weight.T


def test_multihead_attention_true_means_ignore_sdpa_true_means_attend(device, dtype):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(6, num_heads=1, bias=False, batch_first=True).to(device, dtype)
    q, k, v = (random(2, 4, 6, dtype=dtype, device=device, seed=s) for s in range(3))
    ignore = torch.tensor([[False, False, False, True], [False, True, True, True]], device=device)
    with torch.no_grad():
        ours, _ = mha(q, k, v, key_padding_mask=ignore)  # True = ignore
        inverted = the_same_attention_by_hand(mha, q, k, v, ~ignore[:, None, :])  # True = attend
        same = the_same_attention_by_hand(mha, q, k, v, ignore[:, None, :])
    assert_close(ours, inverted)
    assert not torch.allclose(ours, same)


def test_multihead_attention_attn_mask_is_inverted_sdpa_mask_and_is_causal(device, dtype):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(6, num_heads=1, bias=False, batch_first=True).to(device, dtype)
    x = random(2, 5, 6, dtype=dtype, device=device)
    future = torch.ones(5, 5, dtype=torch.bool, device=device).triu(diagonal=1)  # True = ignore
    with torch.no_grad():
        ours, weights = mha(x, x, x, attn_mask=future)
        by_hand = the_same_attention_by_hand(mha, x, x, x, ~future)
        w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
        causal = F.scaled_dot_product_attention(x @ w_q.T, x @ w_k.T, x @ w_v.T, is_causal=True)
    assert_close(ours, by_hand)
    assert_close(ours, causal @ mha.out_proj.weight.T)
    assert bool((weights.triu(diagonal=1) == 0).all())


def test_page_mask_example_agrees_only_when_inverted(masking):
    # V = I, so the outputs are F.scaled_dot_product_attention's weights
    pad, pad_weights = masking["pad"], masking["pad_weights"]
    assert_close(masking["inverted"], pad_weights)  # ~pad: the masked_fill weights
    as_is = masking["as_is"][1]  # sentence 2: only the <pad> keys are kept
    assert bool((as_is[:, ~pad[1]] == 0).all()) and bool((as_is[:, pad[1]] > 0).all())
    assert_close(masking["future"][0], masking["causal_weights"])  # is_causal=True


# --- the function ------------------------------------------------------------

SHAPES = {
    "unbatched": ((5, 8), (5, 8), (5, 8)),
    "cross-attention": ((3, 8), (6, 8), (6, 4)),  # L_q != L_k, d_v != d_k
    "batched": ((2, 5, 8), (2, 5, 8), (2, 5, 8)),
    "heads": ((2, 3, 5, 8), (2, 3, 5, 8), (2, 3, 5, 8)),
    "broadcast-batch": ((2, 3, 5, 8), (1, 3, 7, 8), (1, 3, 7, 8)),
}


@pytest.mark.parametrize("shapes", SHAPES.values(), ids=SHAPES.keys())
def test_matches_pytorch_attention_without_mask(shapes, device, dtype):
    q, k, v = (random(*s, dtype=dtype, device=device, seed=i) for i, s in enumerate(shapes))
    out, weights = scaled_dot_product_attention(q, k, v)
    assert_close(out, F.scaled_dot_product_attention(q, k, v))
    assert weights.shape == (*out.shape[:-1], k.shape[-2])
    assert_close(weights.sum(dim=-1), torch.ones(weights.shape[:-1], dtype=dtype, device=device))


def test_matches_pytorch_attention_with_causal_mask(device, dtype):
    q, k, v = (random(2, 3, 5, 8, dtype=dtype, device=device, seed=i) for i in range(3))
    keep = torch.ones(5, 5, dtype=torch.bool, device=device).tril()
    out, weights = scaled_dot_product_attention(q, k, v, mask=keep)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=keep))
    assert bool((weights.triu(diagonal=1) == 0).all())


def test_matches_pytorch_attention_with_padding_mask(device, dtype):
    q, k, v = (random(2, 3, 5, 8, dtype=dtype, device=device, seed=i) for i in range(3))
    keep = torch.arange(5, device=device) < torch.tensor([5, 2], device=device)[:, None]
    keep = keep[:, None, None, :]  # (B, 1, 1, L)
    out, weights = scaled_dot_product_attention(q, k, v, mask=keep)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=keep))
    assert bool((weights[1, ..., 2:] == 0).all())


def test_matches_pytorch_attention_with_float_mask(device, dtype):
    q, k, v = (random(2, 3, 5, 8, dtype=dtype, device=device, seed=i) for i in range(3))
    bias = random(3, 5, 5, dtype=dtype, device=device, seed=7)  # broadcasts over the batch
    out, _ = scaled_dot_product_attention(q, k, v, mask=bias)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))


def test_weights_match_multihead_attention_weights(device, dtype):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, num_heads=1, bias=False, batch_first=True).to(device, dtype)
    x = random(2, 5, 8, dtype=dtype, device=device)
    ignore = torch.tensor([[False] * 5, [False, False, False, True, True]], device=device)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    with torch.no_grad():
        ref_out, ref_weights = mha(x, x, x, key_padding_mask=ignore)
        out, weights = scaled_dot_product_attention(
            x @ w_q.T, x @ w_k.T, x @ w_v.T, mask=~ignore[:, None, :]
        )
    assert_close(weights, ref_weights)
    assert_close(out @ mha.out_proj.weight.T, ref_out)


def test_a_fully_masked_row_gives_nan_as_documented():
    q = k = v = random(3, 4)
    keep = torch.tensor([[True, True, True], [False, False, False], [True, False, False]])
    out, weights = scaled_dot_product_attention(q, k, v, mask=keep)
    assert bool(out[1].isnan().all()) and not out[[0, 2]].isnan().any()


def test_float16_with_scores_past_float16s_range_matches_pytorch_attention(device):
    # q kᵀ reaches about 80,000, past float16's largest value 65,504: computed in float16, the
    # scores overflow to inf and the softmax gives NaN. The differences between the scores (a few
    # units) are what the softmax sees, so some rows of weights are far from one-hot.
    g = torch.Generator().manual_seed(0)
    q = (200 + torch.randn(2, 3, 5, 8, generator=g)).half().to(device)
    k = (50 + 0.05 * torch.randn(2, 3, 5, 8, generator=g)).half().to(device)
    v = torch.randn(2, 3, 5, 8, generator=g).half().to(device)
    assert bool((q @ k.mT).isinf().any())  # the overflow the function must avoid
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.dtype == weights.dtype == torch.float16
    assert not out.isnan().any() and float(weights.amax(dim=-1).min()) < 0.9  # not all one-hot
    exact = torch.softmax(q.double() @ k.double().mT / 8**0.5, dim=-1) @ v.double()
    ref = F.scaled_dot_product_attention(q, k, v)
    assert not ref.isnan().any()
    # float16 weights and products: errors of about 0.005 on values of about 1, for both
    assert_close(out.double(), exact, atol=1e-2, rtol=0)
    assert_close(ref.double(), exact, atol=1e-2, rtol=0)
    assert_close(out, ref, atol=1e-2, rtol=0)


def test_checked_attention_is_the_function_after_the_checks(device, dtype):
    q, k, v = (random(2, 3, 5, 8, dtype=dtype, device=device, seed=i) for i in range(3))
    keep = torch.ones(5, 5, dtype=torch.bool, device=device).tril()
    checked = checked_attention(q, k, v, keep)
    for a, b in zip(checked, scaled_dot_product_attention(q, k, v, keep), strict=True):
        assert torch.equal(a, b)


def test_the_page_example_matches_pytorch():
    ns = run_script("attention.py")
    q, k, v, keep = ns["q"], ns["k"], ns["v"], ns["keep"]
    assert q.shape == (2, 3, 5, 8) and keep.shape == (2, 1, 1, 5)
    assert_close(ns["out"], F.scaled_dot_product_attention(q, k, v, attn_mask=keep))


Q = torch.ones(2, 5, 8)
K = torch.ones(2, 6, 8)
V = torch.ones(2, 6, 4)


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((torch.ones(8), K, V), ValueError, "q must be (..., L, d), got shape (8,)"),
        (
            (Q, torch.ones(2, 6, 7), V),
            ValueError,
            "q (2, 5, 8) and k (2, 6, 7) need the same feature size d_k",
        ),
        (
            (Q, K, torch.ones(2, 5, 4)),
            ValueError,
            "k (2, 6, 8) and v (2, 5, 4) need the same length L_k",
        ),
        ((torch.ones(2, 0, 8), K, V), ValueError, "q (2, 0, 8) has an empty dimension"),
        (
            (Q, torch.ones(2, 0, 8), torch.ones(2, 0, 4)),
            ValueError,
            "k (2, 0, 8) has an empty dimension",
        ),
        (
            (torch.ones(2, 5, 0), torch.ones(2, 6, 0), V),
            ValueError,
            "q (2, 5, 0) has an empty dimension",
        ),
        ((Q.long(), K, V), TypeError, "q (2, 5, 8) must be float, got torch.int64"),
        (
            (Q, K, V.double()),
            TypeError,
            "dtypes differ: torch.float32, torch.float32, torch.float64",
        ),
        (
            (Q, torch.ones(3, 6, 8), torch.ones(3, 6, 4)),
            ValueError,
            "batches of q (2, 5, 8), k (3, 6, 8), v (3, 6, 4)",
        ),
        (
            (Q, K, V, torch.ones(5, 5, dtype=torch.bool)),
            ValueError,
            "mask (5, 5) does not broadcast to the scores (2, 5, 6)",
        ),
        (
            (Q, K, V, torch.ones(3, 5, 6, dtype=torch.bool)),
            ValueError,
            "mask (3, 5, 6) does not broadcast",
        ),
        (
            (Q, K, V, torch.ones(4, 2, 5, 6, dtype=torch.bool)),
            ValueError,
            "mask (4, 2, 5, 6) does not broadcast",
        ),
        (
            (Q, K, V, torch.ones(5, 6, dtype=torch.int64)),
            TypeError,
            "mask must be bool or torch.float32, got torch.int64",
        ),
    ],
    ids=[
        "wrong-rank",
        "mismatched-d_k",
        "mismatched-L_k",
        "empty-query-sequence",
        "empty-key-sequence",
        "no-features",
        "non-float",
        "mixed-dtypes",
        "batch-not-broadcastable",
        "mask-wrong-length",
        "mask-wrong-batch",
        "mask-would-grow-the-scores",
        "mask-integer",
    ],
)
def test_bad_input_raises_error_naming_the_shapes(args, error, message):
    with pytest.raises(error) as info:
        checked_attention(*args)
    assert message in str(info.value)
    with pytest.raises(error):
        check_attention_inputs(*args)


# --- exercises ---------------------------------------------------------------


@pytest.fixture(scope="module")
def exercises():
    return run_script("exercises.py")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exercise_dividing_by_d_k_shrinks_the_scores_and_makes_softmax_nearly_uniform(seed):
    g = torch.Generator().manual_seed(seed)
    for d_k in (64, 1024):
        q, k = torch.randn(256, 1, d_k, generator=g), torch.randn(256, 16, d_k, generator=g)
        dots = (q * k).sum(dim=-1)
        assert (dots / d_k).std().item() == pytest.approx(1 / math.sqrt(d_k), rel=0.1)
        top_d_k = torch.softmax(dots / d_k, dim=-1).max(dim=-1).values.mean().item()
        top_sqrt = torch.softmax(dots / math.sqrt(d_k), dim=-1).max(dim=-1).values.mean().item()
        assert 1 / 16 < top_d_k < 1 / 16 + 0.02 < 0.2 < top_sqrt < 0.3


def test_page_exercise_dividing_by_d_k(exercises):
    (std_sqrt, std_d_k), (top_sqrt, top_d_k) = exercises["stds"], exercises["tops"]  # d_k = 1024
    assert std_sqrt == pytest.approx(1, abs=0.05) and std_d_k == pytest.approx(1 / 32, rel=0.05)
    assert 1 / 16 < top_d_k < 0.07 and top_sqrt > 0.2


def test_exercise_padding_mask_on_the_query_axis_hides_rows_and_leaves_pad_keys_visible(masking):
    scores, pad = masking["scores"], masking["pad"]
    wrong = torch.softmax(scores.masked_fill(pad[:, :, None], float("-inf")), dim=-1)
    assert bool(wrong[1, 2:].isnan().all())  # the padding queries: every key hidden
    assert bool((wrong[1, :2, 2:] > 0).all())  # the real words still attend to <pad>
    right = masking["pad_weights"]
    assert not right.isnan().any() and bool((right[1, :, 2:] == 0).all())


def test_exercise_masked_softmax_gives_rows_without_keys_zero_weight_and_a_finite_gradient(
    exercises, device, dtype
):
    masked_softmax = exercises["masked_softmax"]
    scores = random(2, 5, 4, dtype=dtype, device=device).requires_grad_()
    hide = torch.zeros(2, 5, 4, dtype=torch.bool, device=device)
    hide[0, 1] = True  # one row with every key hidden
    hide[1, :, 2:] = True  # padding
    hide[1, 3] = True  # and one more row with no key
    weights = masked_softmax(scores, hide)
    no_key = hide.all(dim=-1)
    assert bool((weights[no_key] == 0).all())
    expected = torch.softmax(scores.detach().masked_fill(hide, float("-inf")), dim=-1)
    assert_close(weights[~no_key], expected[~no_key])
    (weights * random(2, 5, 4, dtype=dtype, device=device, seed=1)).sum().backward()
    assert bool(scores.grad.isfinite().all()) and bool((scores.grad[hide] == 0).all())


def test_exercise_masked_softmax_matches_pytorch_attention_and_zeroes_a_query_with_no_key(
    exercises, device
):
    # what F.scaled_dot_product_attention gives a query with no key differs between backends (FAQ
    # Q10): compare the other queries only
    q, k, v = (random(1, 3, 4, seed=s, device=device) for s in range(3))
    keep = torch.tensor(
        [[False, False, False], [True, True, False], [True, True, True]], device=device
    )
    weights = exercises["masked_softmax"](q @ k.mT / 2, ~keep)  # √d_k = 2
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    assert_close((weights @ v)[:, 1:], ref[:, 1:])
    assert bool(((weights @ v)[:, 0] == 0).all())


def test_exercise_one_combined_mask_matches_multihead_attention_with_both_masks(device, dtype):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(6, num_heads=1, bias=False, batch_first=True).to(device, dtype)
    x = random(3, 5, 6, dtype=dtype, device=device)
    pad = torch.tensor(
        [[False] * 5, [False, False, False, True, True], [False, True, True, True, True]],
        device=device,
    )
    causal = torch.ones(5, 5, dtype=torch.bool, device=device).triu(diagonal=1)
    keep = ~(pad[:, None, :] | causal)
    assert torch.equal(keep, ~pad[:, None, :] & ~causal)  # invert first, then combine with &
    with torch.no_grad():
        ref, _ = mha(x, x, x, key_padding_mask=pad, attn_mask=causal)
        ours = the_same_attention_by_hand(mha, x, x, x, keep)
    assert_close(ours, ref)


def test_page_exercise_combined_mask(exercises):
    keep, pad, causal = exercises["keep"], exercises["pad"], exercises["causal"]
    assert keep.shape == (2, 4, 4) and bool(keep.any(dim=-1).all())  # no query without a key
    by_hand = torch.softmax(exercises["scores"], dim=-1)
    assert_close(exercises["weights"], by_hand)  # V = I: the output is the weights
    q, k = exercises["q"], exercises["k"]
    hidden = pad[:, None] | causal
    assert bool((by_hand[hidden] == 0).all())
    assert_close(
        exercises["weights"],
        F.scaled_dot_product_attention(q, k, torch.eye(4).expand(2, 4, 4), attn_mask=~hidden),
    )


# --- figures -----------------------------------------------------------------


@pytest.fixture(scope="module")
def figures():
    from qkvsite.figures import load_all, render

    load_all()
    return render


def test_weights_heatmap_shows_the_computed_weights_with_tokens_on_both_axes(figures, steps):
    svg = figures("sdpa-weights", "zh").decode()
    for v in steps["weights"].flatten().tolist() + steps["weights"].sum(dim=-1).tolist():
        assert f">{v:.3f}<" in svg
    for token in ("t0", "t1", "t2", "t3"):  # neutral names: the numbers are random
        assert svg.count(f">{token}<") >= 3  # row labels of both panels, column labels
    assert ">t1<" in figures("sdpa-weights", "en").decode()


def test_variance_and_saturation_plots_show_the_measured_numbers(figures, why_scale):
    variance = figures("sdpa-variance", "zh").decode()
    for raw, scaled in zip(why_scale["raw_var"], why_scale["scaled_var"], strict=True):
        assert f">{raw:.0f}<" in variance and f">{scaled:.2f}<" in variance
    saturation = figures("sdpa-saturation", "en").decode()
    for name in ("raw", "scaled"):
        for w, g in zip(why_scale["max_weight"][name], why_scale["grad_norm"][name], strict=True):
            assert f">{w:.3f}<" in saturation and f">{g:.1e}<" in saturation
