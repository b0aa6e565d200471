"""The bug gallery (docs/bug-gallery.{zh,en}.md): snippets/bug_gallery/*. Each buggy version is
wrong and each fixed version is right, checked against PyTorch's own functions."""

import io
import re
from functools import cache

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

from qkvsite.dialect import version_tuple
from tests.conftest import run_snippet

NEW_TORCH = version_tuple(torch.__version__) >= (2, 3)


@cache
def snippet(name: str) -> dict:
    """The variables of snippets/bug_gallery/<name>.py after it ran (what it prints is
    discarded)."""
    return run_snippet(f"bug_gallery/{name}.py", stdout=io.StringIO())


def randn(*shape, device, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype).to(device)


def assert_differs(actual, expected, at_least=1e-2):
    assert (actual - expected).abs().max().item() > at_least


# --- scaling by d_model ------------------------------------------------------------------------


def test_head_scaled_by_d_model_differs_from_sdpa_and_is_sdpa_with_that_scale():
    ns = snippet("scale_by_d_model")
    x, w_q, w_k, w_v, d_model = ns["x"], ns["w_q"], ns["w_k"], ns["w_v"], ns["d_model"]
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    assert_differs(ns["head_buggy"](x), F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert_close(
        ns["head_buggy"](x),
        F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=d_model**-0.5),
    )


def test_head_scaled_by_d_k_equals_sdpa():
    ns = snippet("scale_by_d_model")
    x, w_q, w_k, w_v = ns["x"], ns["w_q"], ns["w_k"], ns["w_v"]
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    assert_close(ns["head_fixed"](x), F.scaled_dot_product_attention(q, k, v, is_causal=True))


# --- inverted boolean mask ---------------------------------------------------------------------


def test_triu_mask_given_to_sdpa_lets_queries_see_the_future_and_its_inverse_is_causal(
    device, dtype
):
    ns = snippet("inverted_bool_mask")
    q, k, v = (randn(2, 2, 5, 8, device=device, dtype=dtype, seed=s) for s in range(3))
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # the last row of the inverted mask hides every key: compare the rows before it
    assert_differs(ns["attend_buggy"](q, k, v)[..., :-1, :], causal[..., :-1, :])
    assert_close(ns["attend_fixed"](q, k, v), causal)


# --- float mask cast to bool -------------------------------------------------------------------


def test_float_mask_cast_to_bool_attends_only_to_padding_and_comparing_with_zero_keeps_it(
    device, dtype
):
    ns = snippet("float_mask_to_bool")
    B, H, L, d_k = 2, 2, 5, 8
    q, k, v = (randn(B, H, L, d_k, device=device, dtype=dtype, seed=s) for s in range(3))
    pad = torch.tensor([[False] * 4 + [True], [False] * 3 + [True] * 2], device=device)
    bias = torch.zeros(B, 1, 1, L, device=device, dtype=dtype)
    bias = bias.masked_fill(pad[:, None, None, :], torch.finfo(dtype).min)
    keep = ~pad[:, None, None, :]
    right = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    buggy = ns["attend_buggy"](q, k, v, bias)
    assert_differs(buggy, right)
    assert_close(buggy, F.scaled_dot_product_attention(q, k, v, attn_mask=pad[:, None, None, :]))
    assert_close(ns["attend_fixed"](q, k, v, bias), right)
    assert_close(
        ns["attend_fixed"](q, k, v, bias), F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    )


# --- splitting and merging heads ---------------------------------------------------------------


def identity_mha(d_model, H, device, dtype):
    """nn.MultiheadAttention with identity projections: attention of already projected Q, K, V, head
    by head."""
    mha = nn.MultiheadAttention(d_model, H, bias=False, batch_first=True).to(device, dtype)
    with torch.no_grad():
        eye = torch.eye(d_model, device=device, dtype=dtype)
        mha.in_proj_weight.copy_(eye.repeat(3, 1))
        mha.out_proj.weight.copy_(eye)
    return mha


@pytest.mark.parametrize("name", ["split_heads_view", "merge_heads_reshape"])
def test_heads_split_or_merged_without_transpose_differ_from_multihead_attention(
    name, device, dtype
):
    ns = snippet(name)
    Q, K, V = (randn(2, 3, ns["d_model"], device=device, dtype=dtype, seed=s) for s in range(3))
    reference, _ = identity_mha(ns["d_model"], ns["H"], device, dtype)(Q, K, V, need_weights=False)
    assert_differs(ns["heads_buggy"](Q, K, V), reference)


@pytest.mark.parametrize("name", ["split_heads_view", "merge_heads_reshape"])
def test_heads_split_and_merged_with_transpose_equal_multihead_attention(name, device, dtype):
    ns = snippet(name)
    Q, K, V = (randn(2, 3, ns["d_model"], device=device, dtype=dtype, seed=s) for s in range(3))
    reference, _ = identity_mha(ns["d_model"], ns["H"], device, dtype)(Q, K, V, need_weights=False)
    assert_close(ns["heads_fixed"](Q, K, V), reference)


# --- fully masked rows -------------------------------------------------------------------------


def padded_batch(device, dtype):
    x = randn(2, 4, 8, device=device, dtype=dtype)
    pad = torch.tensor([[False] * 4, [True, True, False, False]], device=device)
    causal = torch.ones(4, 4, dtype=torch.bool, device=device).tril()
    return x, causal & ~pad[:, None, :]


def test_fully_masked_rows_give_nan_that_spreads_to_every_row_of_the_next_layer(device, dtype):
    attention = snippet("fully_masked_rows")["attention"]
    x, keep = padded_batch(device, dtype)
    out1 = attention(x, keep)
    out2 = attention(out1, keep)
    assert out1[1].isnan().any(dim=-1).tolist() == [True, True, False, False]
    assert out2[1].isnan().all() and not out2[0].isnan().any()


def test_letting_each_query_see_itself_removes_nan_and_real_tokens_equal_sdpa_alone(device, dtype):
    attention = snippet("fully_masked_rows")["attention"]
    x, keep = padded_batch(device, dtype)
    keep = keep | torch.eye(4, dtype=torch.bool, device=device)
    out2 = attention(attention(x, keep), keep)
    assert not out2.isnan().any()
    alone = x[1:, 2:]
    for _ in range(2):
        alone = F.scaled_dot_product_attention(alone, alone, alone, is_causal=True)
    assert_close(out2[1:, 2:], alone)
    unpadded = x[:1]
    for _ in range(2):
        unpadded = F.scaled_dot_product_attention(unpadded, unpadded, unpadded, is_causal=True)
    assert_close(out2[:1], unpadded)


# --- padded queries in a mean ------------------------------------------------------------------


def test_mean_over_all_rows_depends_on_padding_and_mean_over_real_rows_does_not(device, dtype):
    ns = snippet("padded_queries")
    tokens = randn(2, 3, 8, device=device, dtype=dtype)  # two sequences of 3 real tokens
    x = torch.cat([tokens, torch.zeros(2, 2, 8, device=device, dtype=dtype)], dim=1)
    pad = torch.tensor([[False] * 3 + [True] * 2] * 2, device=device)
    alone = F.scaled_dot_product_attention(tokens, tokens, tokens).mean(dim=1)
    assert_differs(ns["embed_buggy"](x, pad), alone)
    assert_close(ns["embed_fixed"](x, pad), alone)


# --- the causal corner with a KV cache ---------------------------------------------------------


@pytest.mark.parametrize("L_q, L_k", [(2, 6), (1, 5), (3, 7)])
def test_is_causal_true_with_cached_keys_differs_from_the_full_computation(L_q, L_k, device, dtype):
    ns = snippet("kv_cache_corner")
    q_all, k, v = (randn(1, 2, L_k, 8, device=device, dtype=dtype, seed=s) for s in range(3))
    full = F.scaled_dot_product_attention(q_all, k, v, is_causal=True)[:, :, -L_q:]
    assert_differs(ns["step_buggy"](q_all[:, :, -L_q:], k, v), full)


@pytest.mark.parametrize("L_q, L_k", [(2, 6), (1, 5), (3, 7), (4, 4)])
def test_bottom_right_mask_equals_the_full_computation_and_causal_lower_right(
    L_q, L_k, device, dtype
):
    ns = snippet("kv_cache_corner")
    q_all, k, v = (randn(1, 2, L_k, 8, device=device, dtype=dtype, seed=s) for s in range(3))
    q = q_all[:, :, -L_q:]
    step = ns["step_fixed"](q, k, v)
    assert_close(step, F.scaled_dot_product_attention(q_all, k, v, is_causal=True)[:, :, -L_q:])
    if NEW_TORCH:
        from torch.nn.attention.bias import causal_lower_right

        assert_close(
            step, F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(L_q, L_k))
        )


# --- ALiBi's sign ------------------------------------------------------------------------------


def paper_alibi(L, m, device):
    """ALiBi as the paper defines it: -m * (i - j) for key j <= query i, -inf above the diagonal."""
    i = torch.arange(L, device=device, dtype=torch.float32)[:, None]
    j = torch.arange(L, device=device, dtype=torch.float32)[None, :]
    return (-m * (i - j)).masked_fill(j > i, float("-inf"))


def test_alibi_with_the_wrong_sign_differs_from_the_paper_and_the_fix_equals_it():
    ns = snippet("alibi_sign")
    L, m = ns["L"], ns["m"]
    device = ns["device"]
    reference = paper_alibi(L, m, device)
    assert_close(ns["alibi_fixed"](L), reference)
    assert_close(
        ns["alibi_fixed"](L + 3), paper_alibi(L + 3, m, device)
    )  # any length, not the script's only
    q, k, v = (randn(1, 1, L, 4, device=device, seed=s) for s in range(3))
    right = F.scaled_dot_product_attention(q, k, v, attn_mask=reference)
    assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=ns["alibi_fixed"](L)), right)
    assert_differs(F.scaled_dot_product_attention(q, k, v, attn_mask=ns["alibi_buggy"](L)), right)


# --- RoPE pairing ------------------------------------------------------------------------------


def test_interleaved_rope_on_half_split_features_changes_the_attention_output():
    ns = snippet("rope_pairing")
    q, k = ns["q"], ns["k"]
    v = randn(*q.shape, device=q.device, seed=5)
    trained = F.scaled_dot_product_attention(ns["rope_half_split"](q), ns["rope_half_split"](k), v)
    buggy = F.scaled_dot_product_attention(ns["rope_interleaved"](q), ns["rope_interleaved"](k), v)
    assert_differs(buggy, trained)
    assert_differs(ns["scores_buggy"](q, k), ns["scores_trained"])


def test_permuting_the_features_makes_interleaved_rope_equal_half_split_rope():
    ns = snippet("rope_pairing")
    q, k, perm = ns["q"], ns["k"], ns["perm"]
    assert_close(ns["rope_interleaved"](q[:, perm]), ns["rope_half_split"](q)[:, perm])
    assert_close(ns["scores_fixed"](q, k), ns["scores_trained"])
    v = randn(*q.shape, device=q.device, seed=5)
    trained = F.scaled_dot_product_attention(ns["rope_half_split"](q), ns["rope_half_split"](k), v)
    fixed = F.scaled_dot_product_attention(
        ns["rope_interleaved"](q[:, perm]), ns["rope_interleaved"](k[:, perm]), v
    )
    assert_close(fixed, trained)


# --- position ids with left padding ------------------------------------------------------------


def test_position_ids_that_count_the_padding_change_the_output_counting_real_tokens_does_not():
    ns = snippet("left_padding_positions")
    forward, tokens, pad = ns["forward"], ns["tokens"], ns["pad"]
    alone = tokens[1:, 2:]
    no_pad = torch.zeros_like(alone, dtype=torch.bool)
    expected = forward(alone, no_pad, torch.arange(2, device=alone.device)[None])[0]
    assert_differs(forward(tokens, pad, ns["positions_buggy"](pad))[1, 2:], expected)
    assert ns["positions_fixed"](pad).tolist() == [[0, 1, 2, 3], [0, 0, 0, 1]]
    assert_close(forward(tokens, pad, ns["positions_fixed"](pad))[1, 2:], expected)
    assert_close(
        forward(tokens, pad, ns["positions_fixed"](pad))[0],
        forward(tokens[:1], pad[:1], ns["positions_fixed"](pad[:1]))[0],
    )


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_bug_of_the_gallery_is_linked_from_the_chapter_that_teaches_its_concept(lang):
    from qkvsite.config import DOCS, chapters

    gallery = (DOCS / f"bug-gallery.{lang}.md").read_text(encoding="utf-8")
    bugs = set(re.findall(r"\{ #(bug-[\w-]+) \}", gallery))
    linked = {
        anchor
        for chapter in chapters()
        for anchor in re.findall(
            r"bug-gallery\.md#(bug-[\w-]+)", (DOCS / f"{chapter}.{lang}.md").read_text("utf-8")
        )
    }
    assert len(bugs) >= 10
    assert bugs == linked, (
        f"not linked from a chapter: {sorted(bugs - linked)}; no such bug: {sorted(linked - bugs)}"
    )
