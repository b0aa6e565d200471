"""The cheat sheet (docs/cheatsheet.{zh,en}.md): snippets/cheatsheet/*, every number it prints
checked against PyTorch's own functions and tensors."""

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from tests.conftest import run_snippet

try:
    from torch.nn.attention.bias import causal_lower_right
except ImportError:  # torch < 2.3
    causal_lower_right = None


@pytest.fixture(scope="module")
def steps():
    return run_snippet("cheatsheet/four_steps.py")


@pytest.fixture(scope="module")
def masks():
    return run_snippet("cheatsheet/masks.py")


@pytest.fixture(scope="module")
def cache():
    return run_snippet("cheatsheet/kv_cache.py")


# --- the four steps ---


def test_four_steps_equal_scaled_dot_product_attention(device, dtype):
    torch.manual_seed(0)
    q = torch.randn(2, 4, 3, 8, dtype=dtype).to(device)
    k = torch.randn(2, 4, 5, 8, dtype=dtype).to(device)
    v = torch.randn(2, 4, 5, 6, dtype=dtype).to(device)
    weights = torch.softmax(q @ k.mT / 8**0.5, dim=-1)
    assert_close(weights @ v, F.scaled_dot_product_attention(q, k, v))


def test_four_steps_shapes_are_the_tables(steps):
    B, H, L_q, L_k, d_k, d_v = (steps[n] for n in ["B", "H", "L_q", "L_k", "d_k", "d_v"])
    assert steps["scores"].shape == steps["weights"].shape == (B, H, L_q, L_k)
    assert steps["out"].shape == (B, H, L_q, d_v)
    assert len({B, H, L_q, L_k, d_k, d_v}) == 6  # a swapped dimension cannot go unnoticed
    ones = torch.ones(B, H, L_q, device=steps["weights"].device)
    assert_close(steps["weights"].sum(dim=-1), ones)


# --- the two boolean conventions ---


def test_mha_with_not_keep_equals_sdpa_with_keep_on_the_same_projections(masks):
    x, keep, mha = masks["x"], masks["keep"], masks["mha"]
    d_model, H = masks["d_model"], masks["H"]
    B, L, d_k = x.shape[0], x.shape[1], d_model // H
    with torch.no_grad():
        expected, _ = mha(x, x, x, attn_mask=~keep)
        q, k, v = F.linear(x, mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)
        heads = [t.view(B, L, H, d_k).transpose(1, 2) for t in (q, k, v)]
        out = F.scaled_dot_product_attention(*heads, attn_mask=keep)
        out = mha.out_proj(out.transpose(1, 2).reshape(B, L, d_model))
    assert_close(out, expected, atol=1e-5, rtol=1e-5)


def test_mha_true_hides_as_a_float_minus_infinity_mask_does(masks):
    x, keep, mha = masks["x"], masks["keep"], masks["mha"]
    minus_inf = torch.zeros(keep.shape, device=x.device).masked_fill(~keep, float("-inf"))
    with torch.no_grad():
        assert_close(mha(x, x, x, attn_mask=~keep)[0], mha(x, x, x, attn_mask=minus_inf)[0])


def test_a_float_mask_is_added_to_the_scores_in_both(masks):
    """The page: a float mask means the same in both, 0 keeps a score and -inf hides it."""
    x, keep, mha = masks["x"], masks["keep"], masks["mha"]
    minus_inf = torch.zeros(keep.shape, device=x.device).masked_fill(~keep, float("-inf"))
    assert_close(
        F.scaled_dot_product_attention(x, x, x, attn_mask=minus_inf),
        F.scaled_dot_product_attention(x, x, x, attn_mask=keep),
    )
    bias = torch.randn(keep.shape, generator=torch.Generator().manual_seed(1)).to(x.device)
    scores = x @ x.mT / x.shape[-1] ** 0.5 + bias  # added to the scaled scores
    assert_close(
        F.scaled_dot_product_attention(x, x, x, attn_mask=bias),
        torch.softmax(scores, dim=-1) @ x,
    )
    with torch.no_grad():
        assert_close(mha(x, x, x, attn_mask=minus_inf)[0], mha(x, x, x, attn_mask=~keep)[0])


def test_the_weights_are_zero_exactly_where_keep_is_false(masks):
    assert torch.equal(masks["weights"][0] > 0, masks["keep"])


# --- is_causal's alignment ---


def qkv(masks, L_q=None, seed=0):
    """Random queries, keys and values for the alignment example's sizes."""
    torch.manual_seed(seed)
    L_q, L_k, d_k = L_q or masks["L_q"], masks["L_k"], 8
    return torch.randn(1, L_q, d_k), torch.randn(1, L_k, d_k), torch.randn(1, L_k, d_k)


def test_is_causal_is_the_top_left_mask(masks):
    q, k, v = qkv(masks)
    assert_close(
        F.scaled_dot_product_attention(q, k, v, is_causal=True),
        F.scaled_dot_product_attention(q, k, v, attn_mask=masks["top_left"]),
    )


def test_lower_right_gives_the_new_queries_the_rows_of_the_full_causal_attention(masks):
    """The last L_q queries of a causal self-attention over all L_k tokens see what lower_right
    lets them see."""
    L_q = masks["L_q"]
    q_all, k, v = qkv(masks, L_q=masks["L_k"])
    full = F.scaled_dot_product_attention(q_all, k, v, is_causal=True)
    new = F.scaled_dot_product_attention(q_all[:, -L_q:], k, v, attn_mask=masks["lower_right"])
    assert_close(new, full[:, -L_q:])
    top = F.scaled_dot_product_attention(q_all[:, -L_q:], k, v, is_causal=True)
    assert not torch.allclose(top, full[:, -L_q:])


@pytest.mark.skipif(causal_lower_right is None, reason="torch.nn.attention.bias: torch >= 2.3")
def test_lower_right_is_pytorchs_causal_lower_right(masks):
    q, k, v = qkv(masks)
    mask = causal_lower_right(masks["L_q"], masks["L_k"])
    assert_close(
        F.scaled_dot_product_attention(q, k, v, attn_mask=masks["lower_right"]),
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
    )


# --- KV-cache sizes ---


def cached_tensors(kind, ns):
    """What one layer caches for B sequences of L tokens, as tensors on the meta device (no
    memory)."""
    B, L, H, d_k, G, d_c, d_r = (ns[n] for n in ["B", "L", "H", "d_k", "G", "d_c", "d_r"])
    meta = {"dtype": torch.bfloat16, "device": "meta"}
    heads = {"MHA": H, "GQA": G, "MQA": 1}
    if kind in heads:
        return [torch.empty(B, heads[kind], L, d_k, **meta) for _ in "kv"]
    return [torch.empty(B, L, d_c, **meta), torch.empty(B, L, d_r, **meta)]


@pytest.mark.parametrize("kind", ["MHA", "GQA", "MQA", "MLA"])
def test_kv_cache_formula_matches_the_bytes_of_the_cached_tensors(cache, kind):
    tensors = cached_tensors(kind, cache)
    assert tensors[0].element_size() == cache["nbytes"]  # bfloat16: 2 bytes
    per_layer = sum(t.numel() * t.element_size() for t in tensors)
    numbers = cache["per_token"][kind] * cache["L"] * cache["B"]
    assert per_layer == numbers * cache["nbytes"]


def test_kv_cache_ratios(cache):
    n = cache["per_token"]
    assert n["MHA"] / n["GQA"] == cache["H"] / cache["G"]
    assert n["MHA"] / n["MQA"] == cache["H"]
    assert n["MQA"] < n["MLA"] < n["GQA"] < n["MHA"]


def test_kv_cache_gqa_in_pytorch_reads_g_heads_of_k_and_v():
    """The GQA cache is G heads: SDPA on them, each shared by H / G query heads, equals MHA on
    copies."""
    torch.manual_seed(0)
    B, H, G, L, d_k = 1, 8, 2, 6, 4
    q = torch.randn(B, H, L, d_k)
    k, v = torch.randn(B, G, L, d_k), torch.randn(B, G, L, d_k)
    copies = [t.repeat_interleave(H // G, dim=1) for t in (k, v)]
    per_group = torch.cat(
        [
            F.scaled_dot_product_attention(
                q[:, g * H // G : (g + 1) * H // G], k[:, g : g + 1], v[:, g : g + 1]
            )
            for g in range(G)
        ],
        dim=1,
    )
    assert_close(per_group, F.scaled_dot_product_attention(q, *copies))
