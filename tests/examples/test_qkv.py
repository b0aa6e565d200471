"""Chapter 2 (docs/qkv.{zh,en}.md): snippets/qkv/*, checked against PyTorch."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

from qkvsite.config import ROOT
from qkvsite.figures import load_all, render, run_example
from snippets.qkv.qkv_projection import CheckedQKVProjection, QKVProjection, check_sequence
from tests.conftest import run_snippet


@pytest.fixture(scope="module")
def chapter():
    """Variables of the self-attention example (sections 2.1 to 2.4) after it ran."""
    return run_snippet("qkv/projections.py")


@pytest.fixture(scope="module")
def cross():
    """Variables of the cross-attention example (section 2.5) after it ran."""
    return run_snippet("qkv/cross_attention.py")


def by_hand_attention(q, k, v):
    """softmax(Q Kᵀ / √d_k) V, written out."""
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v


# --- the example on the page ------------------------------------------------


def test_q_k_v_share_the_rows_of_x_but_not_its_width(chapter):
    X, Q, K, V = (chapter[k] for k in "XQKV")
    n, d_model = X.shape
    d_k, d_v = chapter["d_k"], chapter["d_v"]
    assert (Q.shape, K.shape, V.shape) == ((n, d_k), (n, d_k), (n, d_v))
    assert len({d_model, d_k, d_v}) == 3  # the example keeps the three widths apart


def test_linear_weight_is_out_by_in_and_its_transpose_is_the_formula_matrix(chapter):
    X = chapter["X"]
    for layer, out in [
        (chapter["w_q"], chapter["Q"]),
        (chapter["w_k"], chapter["K"]),
        (chapter["w_v"], chapter["V"]),
    ]:
        assert layer.weight.shape == (out.shape[1], X.shape[1])  # (out_features, in_features)
        assert layer.bias is None
        assert_close(out, X @ layer.weight.T)
        assert_close(out, F.linear(X, layer.weight))


def test_row_k_of_the_weight_computes_column_k_of_the_output(chapter):
    X, Q, w_q = chapter["X"], chapter["Q"], chapter["w_q"]
    for k in range(Q.shape[1]):
        assert_close(Q[:, k], X @ w_q.weight[k])


def test_projection_handles_each_token_on_its_own(chapter):
    X, w_q = chapter["X"], chapter["w_q"]
    changed = X.clone()
    changed[3] = torch.randn(X.shape[1], generator=torch.Generator().manual_seed(1)).to(X.device)
    with torch.no_grad():
        before, after = w_q(X), w_q(changed)
    assert_close(after[:3], before[:3])  # rows 0..2 do not see token 3
    assert not torch.allclose(after[3], before[3])


def test_scores_are_query_key_dot_products_and_not_symmetric(chapter):
    Q, K, S, d_k = chapter["Q"], chapter["K"], chapter["S"], chapter["d_k"]
    n = Q.shape[0]
    for i in range(n):
        for j in range(n):
            assert_close(S[i, j], torch.dot(Q[i], K[j]) / math.sqrt(d_k))
    assert not torch.allclose(S, S.T)
    assert not torch.isclose(S[0, 2], S[2, 0])  # the two cells boxed in figure 2-2


def test_untrained_projections_give_nearly_even_weights(chapter):
    # figure 2-3's caption: the rows of A are close to uniform
    A = chapter["A"]
    assert bool((A.amax(dim=-1) - A.amin(dim=-1) < 0.2).all())
    assert bool((A.amax(dim=-1) < 2 / A.shape[-1]).all())


def test_even_weights_come_from_the_small_default_scale_not_from_randomness(chapter):
    # figure 2-3's caption: nn.Linear draws its weights within ±1/√in_features, so the scores are
    # small; the same random matrices at unit scale give weights far from even; W^V plays no part
    X, d_k = chapter["X"], chapter["d_k"]
    bound = 1 / math.sqrt(X.shape[1])
    W_Q, W_K = chapter["w_q"].weight.T.detach(), chapter["w_k"].weight.T.detach()
    for W in (W_Q, W_K, chapter["w_v"].weight.detach()):
        assert float(W.abs().max()) <= bound
    assert float(chapter["S"].detach().abs().max()) < 0.5
    unit = math.sqrt(3) / bound  # a uniform on ±bound has standard deviation bound/√3
    A_unit = torch.softmax((X @ (unit * W_Q)) @ (X @ (unit * W_K)).T / math.sqrt(d_k), dim=-1)
    assert float(A_unit.amax()) > 0.9 and float(A_unit.amin()) < 0.01
    with torch.no_grad():
        chapter["w_v"].weight.mul_(10)  # another W^V: the same weights
        try:
            Q, K = chapter["w_q"](X), chapter["w_k"](X)
            assert_close(torch.softmax(Q @ K.T / math.sqrt(d_k), dim=-1), chapter["A"])
        finally:
            chapter["w_v"].weight.div_(10)


def test_self_attention_output_has_width_d_v_and_matches_sdpa(chapter):
    Q, K, V, Z = (chapter[k] for k in "QKVZ")
    assert Z.shape == (chapter["L"], chapter["d_v"])
    assert_close(Z, F.scaled_dot_product_attention(Q, K, V))
    assert_close(chapter["out"], Z)


def test_queries_and_keys_of_different_widths_cannot_be_compared(chapter):
    Q, K_wide, V = chapter["Q"], chapter["K_wide"], chapter["V"]
    assert K_wide.shape[1] != Q.shape[1]
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(4x6 and 7x4\)"):
        Q @ K_wide.T
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(Q, K_wide, V)


def test_cross_attention_example_takes_keys_and_values_from_the_encoder(cross):
    x, memory = cross["decoder_x"], cross["memory"]
    assert_close(cross["Q"], x @ cross["w_q"].weight.T)
    assert_close(cross["K"], memory @ cross["w_k"].weight.T)
    assert_close(cross["V"], memory @ cross["w_v"].weight.T)
    n_q, n_kv = x.shape[0], memory.shape[0]
    assert n_q != n_kv
    assert cross["scores"].shape == (n_q, n_kv)
    assert cross["out"].shape == (n_q, cross["d_v"])
    assert_close(cross["A"].sum(dim=-1), torch.ones(n_q, device=x.device))


def test_cross_attention_example_matches_sdpa(cross):
    Q, K, V = (cross[k] for k in "QKV")
    assert_close(cross["by_hand"], F.scaled_dot_product_attention(Q, K, V))
    assert_close(cross["out"], by_hand_attention(Q, K, V))


def test_self_attention_variant_takes_keys_and_values_from_the_decoder(cross):
    # the FAQ's Q2 shows this section after the cross-attention one
    x, Q = cross["decoder_x"], cross["Q"]
    assert_close(cross["K_self"], x @ cross["w_k"].weight.T)
    assert_close(cross["V_self"], x @ cross["w_v"].weight.T)
    n_q = x.shape[0]
    assert cross["scores_self"].shape == (n_q, n_q) != cross["scores"].shape
    assert cross["out_self"].shape == cross["out"].shape  # rows follow the queries either way
    assert_close(cross["out_self"], by_hand_attention(Q, cross["K_self"], cross["V_self"]))


# --- K and V: aligned, not necessarily from the same sequence (2.5, exercises 4 and 5)
# --------------------


def test_keys_and_values_from_two_different_tensors_of_equal_length_match_sdpa(device, dtype):
    # section 2.5: the formula needs K and V aligned row by row, not projected from one sequence
    g = torch.Generator().manual_seed(0)
    n_q, n_kv, d_model, d_k, d_v = 3, 7, 8, 6, 5
    x, a, b = (
        torch.randn(n, d_model, generator=g, dtype=dtype).to(device) for n in (n_q, n_kv, n_kv)
    )
    w_q, w_k, w_v = (
        torch.randn(d, d_model, generator=g, dtype=dtype).to(device) for d in (d_k, d_k, d_v)
    )
    Q, K, V = x @ w_q.T, a @ w_k.T, b @ w_v.T
    assert not torch.allclose(a, b)
    out = F.scaled_dot_product_attention(Q, K, V)
    assert out.shape == (n_q, d_v)
    assert_close(out, by_hand_attention(Q, K, V))


def test_keys_and_values_of_different_lengths_cannot_be_combined(device):
    g = torch.Generator().manual_seed(0)
    Q, K, V_short = (torch.randn(n, d, generator=g).to(device) for n, d in [(3, 6), (7, 6), (5, 5)])
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(3x7 and 5x5\)"):
        by_hand_attention(Q, K, V_short)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(Q, K, V_short)


def test_multihead_attention_takes_key_and_value_as_separate_tensors(device, dtype):
    # the page's aside: nn.MultiheadAttention(query, key, value) accepts two different tensors of
    # equal length
    torch.manual_seed(0)
    d, n_q, n_kv = 6, 3, 7
    mha = nn.MultiheadAttention(d, 1, bias=False, batch_first=True).to(device, dtype)
    with torch.no_grad():
        mha.out_proj.weight.copy_(torch.eye(d, dtype=dtype, device=device))
        x, a, b = (torch.randn(2, n, d, dtype=dtype).to(device) for n in (n_q, n_kv, n_kv))
        expected, _ = mha(x, a, b)
        w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
        ours = by_hand_attention(x @ w_q.T, a @ w_k.T, b @ w_v.T)
        assert_close(ours, expected)
        with pytest.raises(AssertionError, match="does not match value shape"):
            mha(x, a, b[:, :5])


def test_reordering_keys_and_values_together_leaves_the_output_unchanged(device, dtype):
    # exercise 4: only the pairing of row j of K with row j of V matters
    g = torch.Generator().manual_seed(0)
    Q, K, V = (
        torch.randn(n, d, generator=g, dtype=dtype).to(device) for n, d in [(3, 6), (7, 6), (7, 5)]
    )
    out = F.scaled_dot_product_attention(Q, K, V)
    for perm in [torch.arange(6, -1, -1), torch.randperm(7, generator=g)]:
        perm = perm.to(device)
        assert_close(F.scaled_dot_product_attention(Q, K[perm], V[perm]), out)
        assert not torch.allclose(F.scaled_dot_product_attention(Q, K, V[perm]), out, atol=1e-3)


def test_shared_query_and_key_matrix_gives_symmetric_scores_but_not_symmetric_weights(
    device, dtype
):
    # exercise 3: W^Q = W^K makes S = X W (X W)ᵀ / √d_k symmetric; the row-wise softmax is not
    g = torch.Generator().manual_seed(0)
    X = torch.randn(4, 8, generator=g, dtype=dtype).to(device)
    W = torch.randn(8, 6, generator=g, dtype=dtype).to(device)
    Q = K = X @ W
    S = Q @ K.T / math.sqrt(6)
    A = torch.softmax(S, dim=-1)
    assert_close(S, S.T)
    assert_close(A.sum(dim=-1), torch.ones(4, dtype=dtype, device=device))
    assert not torch.allclose(A, A.T, atol=1e-3)
    assert not torch.allclose(A.sum(dim=0), torch.ones(4, dtype=dtype, device=device), atol=1e-3)


def test_identity_projections_give_chapter_1s_scores_divided_by_the_scale(device, dtype):
    # exercise 3's answer: W^Q = W^K = I is chapter 1's X Xᵀ, but divided by √d_k
    X = torch.randn(4, 8, generator=torch.Generator().manual_seed(0), dtype=dtype).to(device)
    identity = torch.eye(8, dtype=dtype, device=device)
    Q, K = X @ identity, X @ identity
    assert_close(Q @ K.T / math.sqrt(Q.shape[-1]), X @ X.T / math.sqrt(8))


def test_changing_one_token_changes_one_row_of_q_and_every_row_of_the_output(device, dtype):
    # exercise 2: the projection is per token; attention mixes every query with the new key and
    # value
    torch.manual_seed(0)
    proj = QKVProjection(8, 6, 5).to(device, dtype)
    X = torch.randn(4, 8, dtype=dtype).to(device)
    X2 = X.clone()
    X2[3] = torch.randn(8, dtype=dtype).to(device)
    with torch.no_grad():
        (Q, K, V), (Q2, K2, V2) = proj(X), proj(X2)
    assert_close(Q2[:3], Q[:3])
    assert not torch.allclose(Q2[3], Q[3])
    Z, Z2 = F.scaled_dot_product_attention(Q, K, V), F.scaled_dot_product_attention(Q2, K2, V2)
    assert not torch.isclose(Z, Z2, rtol=0, atol=1e-3).all(dim=-1).any()


def test_exercise_snippet_keys_from_one_tensor_values_from_another():
    ns = run_snippet("qkv/exercises.py")  # the variables of its last section, exercise 5
    Q, K, V, a, b = (ns[k] for k in ["Q", "K", "V", "a", "b"])
    assert not torch.allclose(a, b)
    assert_close(K, a @ ns["w_k"].weight.T)
    assert_close(V, b @ ns["w_v"].weight.T)
    assert_close(ns["out"], by_hand_attention(Q, K, V))
    assert ns["V_short"].shape[0] != K.shape[0]


# --- a verb looking for its subject (the hand trace) ------------------------


@pytest.fixture(scope="module")
def verb():
    """Variables of the hand-made "dog bites man" example after it ran."""
    return run_snippet("qkv/verb_subject.py")


def test_the_verbs_query_finds_the_noun_that_carries_the_subject_feature(verb):
    tokens, weights = verb["tokens"], verb["weights"]
    assert tokens[int(weights.argmax())] == "dog"
    assert float(weights.max()) > 0.8
    # chapter 1's X Xᵀ, with no projections, would send bites to itself
    X = verb["X"]
    assert tokens[int((X[1] @ X.T).argmax())] == "bites"


def test_the_hand_trace_matches_pytorch_attention(verb):
    Q, K, V = (verb[k] for k in "QKV")
    assert_close(verb["scores"], Q[1] @ K.T)
    assert_close(verb["weights"], torch.softmax(Q[1] @ K.T, dim=-1))
    out = F.scaled_dot_product_attention(Q, K, V, scale=1.0)
    assert_close(verb["z_bites"], out[1])
    assert_close(verb["Z"], out)
    assert_close(verb["S"], Q @ K.T)
    assert not torch.allclose(verb["S"], verb["S"].T)  # bites looks for dog, not dog for bites


def test_moving_the_subject_feature_moves_the_verbs_attention(verb):
    # "man bites dog": the same W, the verb now takes the human's value
    tokens, w2 = verb["tokens"], verb["weights2"]
    assert tokens[int(w2.argmax())] == "man"
    out = F.scaled_dot_product_attention(verb["Q2"], verb["K2"], verb["V2"], scale=1.0)
    assert_close(w2 @ verb["V2"], out[1])
    assert_close(verb["weights2"], verb["weights"].flip(0))


def test_roles_figure_shows_the_trace_values():
    load_all()
    ns = run_example("qkv/verb_subject.py")
    svg = render("qkv-roles", "en").decode()
    for t, fmt in [
        (ns["Q"][1], "{:.0f}"),
        (ns["K"], "{:.0f}"),
        (ns["scores"], "{:.0f}"),
        (ns["weights"], "{:.3f}"),
        (ns["V"], "{:.0f}"),
        (ns["z_bites"], "{:.3f}"),
    ]:
        assert all(f">{c}<" in svg for c in cells(t, fmt)), fmt
    assert ">bites<" in svg
    assert "咬" in render("qkv-roles", "zh").decode()


# --- QKVProjection ------------------------------------------------------------


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)], ids=["unbatched", "batched", "4d"])
def test_qkv_projection_equals_x_times_the_formula_matrices(batch, device, dtype):
    torch.manual_seed(0)
    d_model, d_k, d_v = 8, 6, 5
    W_Q, W_K, W_V = (torch.randn(d_model, d, dtype=dtype).to(device) for d in (d_k, d_k, d_v))
    proj = QKVProjection(d_model, d_k, d_v).to(device, dtype)
    with torch.no_grad():  # store W^Q as the layer's weight: weight = W^Q transposed
        proj.w_q.weight.copy_(W_Q.T)
        proj.w_k.weight.copy_(W_K.T)
        proj.w_v.weight.copy_(W_V.T)
    x = torch.randn(*batch, 4, d_model, dtype=dtype).to(device)
    Q, K, V = proj(x)
    assert (Q.shape, K.shape, V.shape) == ((*batch, 4, d_k), (*batch, 4, d_k), (*batch, 4, d_v))
    assert_close(Q, x @ W_Q)
    assert_close(K, x @ W_K)
    assert_close(V, x @ W_V)


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)], ids=["unbatched", "batched", "4d"])
def test_cross_attention_matches_sdpa(batch, device, dtype):
    torch.manual_seed(0)
    n_q, n_kv, d_model, d_context, d_k, d_v = 3, 7, 8, 10, 6, 5
    proj = QKVProjection(d_model, d_k, d_v, d_context=d_context).to(device, dtype)
    x = torch.randn(*batch, n_q, d_model, dtype=dtype).to(device)
    memory = torch.randn(*batch, n_kv, d_context, dtype=dtype).to(device)
    with torch.no_grad():
        Q, K, V = proj(x, memory)
        out = F.scaled_dot_product_attention(Q, K, V)
    assert (Q.shape, K.shape, V.shape) == (
        (*batch, n_q, d_k),
        (*batch, n_kv, d_k),
        (*batch, n_kv, d_v),
    )
    assert out.shape == (*batch, n_q, d_v)
    assert_close(out, by_hand_attention(Q, K, V))


def test_cross_attention_matches_multihead_attention_with_one_head(device, dtype):
    # one head, no bias, out_proj = identity: nn.MultiheadAttention reduces to softmax(Q Kᵀ/√d) V
    torch.manual_seed(0)
    d, d_context, n_q, n_kv = 6, 10, 3, 7
    mha = nn.MultiheadAttention(d, 1, bias=False, kdim=d_context, vdim=d_context, batch_first=True)
    mha = mha.to(device, dtype)
    proj = QKVProjection(d, d, d, d_context=d_context).to(device, dtype)
    with torch.no_grad():
        mha.q_proj_weight.copy_(proj.w_q.weight)
        mha.k_proj_weight.copy_(proj.w_k.weight)
        mha.v_proj_weight.copy_(proj.w_v.weight)
        mha.out_proj.weight.copy_(torch.eye(d, dtype=dtype, device=device))
        x = torch.randn(2, n_q, d, dtype=dtype).to(device)
        memory = torch.randn(2, n_kv, d_context, dtype=dtype).to(device)
        expected, weights = mha(x, memory, memory)
        Q, K, V = proj(x, memory)
        ours = F.scaled_dot_product_attention(Q, K, V)
    assert weights.shape == (2, n_q, n_kv)
    assert_close(ours, expected)
    assert_close(torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(d), dim=-1), weights)


def test_self_attention_is_cross_attention_with_x_as_context(device, dtype):
    torch.manual_seed(0)
    proj = QKVProjection(8, 6, 5).to(device, dtype)
    x = torch.randn(2, 4, 8, dtype=dtype).to(device)
    for own, crossed in zip(proj(x), proj(x, x), strict=True):
        assert_close(own, crossed)


def test_keys_and_values_follow_the_context_length():
    proj = QKVProjection(8, 6, 5, d_context=3)
    Q, K, V = proj(torch.randn(4, 8), torch.randn(9, 3))
    assert (Q.shape, K.shape, V.shape) == ((4, 6), (9, 6), (9, 5))
    assert proj.w_k.weight.shape == (6, 3) and proj.w_v.weight.shape == (5, 3)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda p: p(torch.ones(8)), ValueError, "x must be (L, 8) or (B, L, 8), got shape (8,)"),
        (
            lambda p: p(torch.ones(4, 7)),
            ValueError,
            "x has 7 features per token but the projection expects 8",
        ),
        (lambda p: p(torch.ones(0, 8)), ValueError, "x needs at least one token, got shape (0, 8)"),
        (lambda p: p(torch.ones(2, 0, 8)), ValueError, "got shape (2, 0, 8)"),
        (
            lambda p: p(torch.ones(4, 8, dtype=torch.int64)),
            TypeError,
            "got torch.int64, shape (4, 8)",
        ),
        (lambda p: p(torch.ones(4, 8), torch.ones(5)), ValueError, "context must be (L, 8)"),
        (lambda p: p(torch.ones(4, 8), torch.ones(5, 9)), ValueError, "context has 9 features"),
        (
            lambda p: p(torch.ones(4, 8), torch.ones(0, 8)),
            ValueError,
            "context needs at least one token",
        ),
        (
            lambda p: p(torch.ones(4, 8), torch.ones(5, 8, dtype=torch.bool)),
            TypeError,
            "torch.bool, shape (5, 8)",
        ),
        (
            lambda p: p(torch.ones(2, 4, 8), torch.ones(3, 5, 8)),
            ValueError,
            "x (2, 4, 8) and context (3, 5, 8)",
        ),
        (
            lambda p: p(torch.ones(4, 8, dtype=torch.float64)),
            TypeError,
            "x is torch.float64, shape (4, 8)",
        ),
        (lambda p: check_sequence("q", torch.tensor(1.0), 8), ValueError, "q must be (L, 8)"),
    ],
    ids=[
        "wrong-rank",
        "mismatched-features",
        "empty-sequence",
        "batched-empty-sequence",
        "non-float",
        "context-wrong-rank",
        "context-mismatched-features",
        "context-empty",
        "context-non-float",
        "batch-mismatch",
        "dtype-differs-from-weights",
        "scalar",
    ],
)
def test_bad_input_raises_error_naming_the_shapes(call, error, message):
    proj = CheckedQKVProjection(8, 6, 5)
    with pytest.raises(error) as info:
        call(proj)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "sizes, message",
    [
        ((8, 0, 5), "d_k must be a positive int, got 0"),
        ((8, 6, 5.0), "d_v must be a positive int, got 5.0"),
    ],
    ids=["zero-width", "float-width"],
)
def test_constructor_rejects_bad_sizes(sizes, message):
    with pytest.raises(ValueError, match=message):
        CheckedQKVProjection(*sizes)


@pytest.mark.parametrize("batch", [(), (2,)], ids=["unbatched", "batched"])
def test_the_checked_projection_computes_what_the_core_module_does(batch, device, dtype):
    torch.manual_seed(0)
    core = QKVProjection(8, 6, 5, d_context=3).to(device, dtype)
    checked = CheckedQKVProjection(8, 6, 5, d_context=3).to(device, dtype)
    checked.load_state_dict(core.state_dict())
    x = torch.randn(*batch, 4, 8, dtype=dtype).to(device)
    memory = torch.randn(*batch, 9, 3, dtype=dtype).to(device)
    for ours, theirs in zip(checked(x, memory), core(x, memory), strict=True):
        assert_close(ours, theirs)


def test_the_core_module_is_at_most_15_lines():
    # section 2.6 shows the idea first: three nn.Linear and forward
    source = (ROOT / "snippets/qkv/qkv_projection.py").read_text(encoding="utf-8")
    core = source.split("class QKVProjection", 1)[1].split("# --8<-- [end:module]", 1)[0]
    assert len([line for line in core.splitlines() if line.strip()]) <= 15


# --- figures ----------------------------------------------------------------------


def cells(t, fmt):
    return [fmt.format(v).replace("-0.00", "0.00") for v in t.detach().cpu().flatten().tolist()]


def test_projection_figure_shows_the_example_matrices_and_shapes():
    load_all()
    ns = run_example("qkv/projections.py")
    svg = render("qkv-projections", "en").decode()
    matrices = [
        ns["X"],
        ns["w_q"].weight.T,
        ns["w_k"].weight.T,
        ns["w_v"].weight.T,
        ns["Q"],
        ns["K"],
        ns["V"],
    ]
    for t in matrices:
        assert "({}×{})".format(*t.shape) in svg
        for cell in cells(t, "{:.2f}"):
            assert f">{cell}<" in svg
    assert "词元 0" in render("qkv-projections", "zh").decode()


def test_score_and_cross_attention_figures_show_the_computed_values():
    load_all()
    ns = run_example("qkv/projections.py")
    svg = render("qkv-scores", "en").decode()
    assert all(f">{c}<" in svg for c in cells(ns["S"], "{:.2f}") + cells(ns["A"], "{:.3f}"))
    ns = run_example("qkv/cross_attention.py")
    svg = render("cross-attention", "en").decode()
    assert all(
        f">{c}<" in svg
        for c in cells(ns["A"], "{:.2f}") + cells(ns["V"], "{:.2f}") + cells(ns["out"], "{:.2f}")
    )
    assert "{}×{}".format(*ns["scores"].shape) in svg and "{}×{}".format(*ns["out"].shape) in svg
    assert "编码器" in render("cross-attention", "zh").decode()
