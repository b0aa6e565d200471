"""Chapter 4 (docs/multi-head.{zh,en}.md): snippets/multi_head/*, checked against PyTorch."""

import copy
import io

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.testing import assert_close

from qkvsite.config import DOCS
from qkvsite.dialect import Page
from snippets.multi_head.checks import check_input
from snippets.multi_head.multi_head_attention import (
    CheckedMultiHeadAttention,
    MultiHeadAttention,
)
from tests.conftest import run_snippet


def run_script(name):
    return run_snippet(f"multi_head/{name}")


@pytest.fixture(scope="module")
def head_by_head():
    return run_script("head_by_head.py")


@pytest.fixture(scope="module")
def chapter():
    """Variables of multi_head_attention.py after its demo ran."""
    return run_script("multi_head_attention.py")


def pytorch_and_ours(E, H, device, dtype, bias=True, seed=0, cls=CheckedMultiHeadAttention):
    """nn.MultiheadAttention with random weights and biases, and our module (the robust version
    unless ``cls`` says otherwise) with a copy."""
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(E, H, bias=bias, batch_first=True, dtype=dtype)
    ours = cls(E, H, bias=bias).to(dtype)
    with torch.no_grad():
        if bias:
            nn.init.normal_(ref.in_proj_bias)
            nn.init.normal_(ref.out_proj.bias)
            ours.in_proj.bias.copy_(ref.in_proj_bias)
            ours.out_proj.bias.copy_(ref.out_proj.bias)
        ours.in_proj.weight.copy_(ref.in_proj_weight)
        ours.out_proj.weight.copy_(ref.out_proj.weight)
    return ref.to(device), ours.to(device)


def masks(kind, B, L, device):
    causal = torch.ones(L, L, dtype=torch.bool, device=device).triu(diagonal=1)
    padding = torch.zeros(B, L, dtype=torch.bool, device=device)
    padding[-1, L // 2 + 1 :] = True  # the last sequence ends in padding
    return {
        "none": {},
        "causal": {"attn_mask": causal},
        "padding": {"key_padding_mask": padding},
        "causal+padding": {"attn_mask": causal, "key_padding_mask": padding},
    }[kind]


@pytest.mark.parametrize("mask", ["none", "causal", "padding", "causal+padding"])
@pytest.mark.parametrize("B, L, E, H", [(2, 5, 12, 3), (3, 7, 16, 4), (1, 1, 8, 1)])
def test_module_equals_nn_multihead_attention_with_copied_weights(B, L, E, H, mask, device, dtype):
    ref, ours = pytorch_and_ours(E, H, device, dtype)
    x = torch.randn(B, L, E, dtype=dtype).to(device)
    kwargs = masks(mask, B, L, device)
    out, weights = ours(x, **kwargs)
    expected_out, expected_weights = ref(x, x, x, **kwargs, average_attn_weights=False)
    assert out.shape == (B, L, E) and weights.shape == (B, H, L, L)
    assert_close(out, expected_out)
    assert_close(weights, expected_weights)


@pytest.mark.parametrize("mask", ["none", "causal", "padding", "causal+padding"])
def test_core_module_with_one_combined_mask_equals_nn_multihead_attention(mask, device, dtype):
    # the page's core module takes one bool mask: padding (B, L) becomes (B, 1, 1, L)
    B, L, E, H = 3, 7, 16, 4
    ref, ours = pytorch_and_ours(E, H, device, dtype, cls=MultiHeadAttention)
    x = torch.randn(B, L, E, dtype=dtype).to(device)
    kwargs = masks(mask, B, L, device)
    combined = kwargs.get("attn_mask")
    if "key_padding_mask" in kwargs:
        hidden = kwargs["key_padding_mask"][:, None, None, :]
        combined = hidden if combined is None else combined | hidden
    out, weights = ours(x, attn_mask=combined)
    expected_out, expected_weights = ref(x, x, x, **kwargs, average_attn_weights=False)
    assert_close(out, expected_out)
    assert_close(weights, expected_weights)


def test_robust_version_computes_what_the_core_module_computes(device, dtype):
    torch.manual_seed(0)
    core = MultiHeadAttention(12, 3).to(device, dtype)
    checked = CheckedMultiHeadAttention(12, 3).to(device, dtype)
    checked.load_state_dict(core.state_dict())  # the same parameter names and shapes
    x = torch.randn(2, 5, 12, dtype=dtype).to(device)
    causal = torch.ones(5, 5, dtype=torch.bool, device=device).triu(diagonal=1)
    t_core, t_checked = {}, {}
    for a, b in zip(core(x, causal, t_core), checked(x, causal, trace=t_checked), strict=True):
        assert torch.equal(a, b)
    assert t_core.keys() == t_checked.keys()


@pytest.mark.parametrize("page", ["multi-head", "shapes"])
def test_the_core_module_the_pages_show_is_the_40_lines_they_say(page):
    # chapter 4 shows it first, chapter 5 folds it above its table; both call it 40 lines
    for lang in ("en", "zh"):
        path = DOCS / f"{page}.{lang}.md"
        block = next(b for b in Page(path).blocks if "class Multi" in b.code)
        assert "def check" not in block.code and "warnings" not in block.code
        assert len(block.code.strip().splitlines()) == 40
        assert "40" in path.read_text(encoding="utf-8")


def test_module_without_bias_equals_nn_multihead_attention(device, dtype):
    ref, ours = pytorch_and_ours(12, 3, device, dtype, bias=False)
    x = torch.randn(2, 5, 12, dtype=dtype).to(device)
    assert_close(ours(x)[0], ref(x, x, x)[0])


def test_pytorch_default_weights_are_the_mean_over_our_heads(device, dtype):
    ref, ours = pytorch_and_ours(12, 3, device, dtype)
    x = torch.randn(2, 5, 12, dtype=dtype).to(device)
    _, averaged = ref(x, x, x)  # average_attn_weights=True by default
    assert averaged.shape == (2, 5, 5)
    assert_close(ours(x)[1].mean(dim=1), averaged)


def test_gradients_equal_nn_multihead_attention(device, dtype):
    ref, ours = pytorch_and_ours(12, 3, device, dtype)
    x = torch.randn(2, 5, 12, dtype=dtype).to(device)
    x_ours, x_ref = x.clone().requires_grad_(), x.clone().requires_grad_()
    ours(x_ours)[0].square().sum().backward()
    ref(x_ref, x_ref, x_ref)[0].square().sum().backward()
    assert_close(x_ours.grad, x_ref.grad)
    assert_close(ours.in_proj.weight.grad, ref.in_proj_weight.grad)
    assert_close(ours.out_proj.weight.grad, ref.out_proj.weight.grad)


@pytest.mark.parametrize("with_padding", [False, True], ids=["no-mask", "padding"])
def test_unbatched_input_equals_nn_multihead_attention_and_batched_row(with_padding, device, dtype):
    ref, ours = pytorch_and_ours(12, 3, device, dtype)
    x = torch.randn(2, 5, 12, dtype=dtype).to(device)
    kwargs = {}
    if with_padding:
        kwargs["key_padding_mask"] = torch.tensor([False, False, False, True, True], device=device)
    out, weights = ours(x[0], **kwargs)
    expected_out, expected_weights = ref(x[0], x[0], x[0], **kwargs, average_attn_weights=False)
    assert out.shape == (5, 12) and weights.shape == (3, 5, 5)
    assert_close(out, expected_out)
    assert_close(weights, expected_weights)
    batched_kwargs = {k: v[None] for k, v in kwargs.items()}
    assert_close(out, ours(x[:1], **batched_kwargs)[0][0])


def test_each_head_is_sdpa_scaled_by_the_head_dim_not_e(device, dtype):
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, 3).to(device, dtype)
    trace = {}
    mha(torch.randn(2, 5, 12, dtype=dtype).to(device), trace=trace)
    q, k, v = trace["Q_h"], trace["K_h"], trace["V_h"]
    assert_close(trace["heads"], F.scaled_dot_product_attention(q, k, v))  # scale 1/√(E/H)
    assert not torch.allclose(
        trace["heads"], F.scaled_dot_product_attention(q, k, v, scale=12**-0.5)
    )


def test_head_h_uses_rows_h_dk_of_each_projection(device, dtype):
    torch.manual_seed(0)
    E, H = 12, 3
    d = E // H
    mha = MultiHeadAttention(E, H).to(device, dtype)
    x = torch.randn(2, 5, E, dtype=dtype).to(device)
    trace = {}
    mha(x, trace=trace)
    W, b = mha.in_proj.weight, mha.in_proj.bias
    for part, name in enumerate(["Q_h", "K_h", "V_h"]):
        for h in range(H):
            rows = slice(part * E + h * d, part * E + (h + 1) * d)
            assert_close(trace[name][:, h], x @ W[rows].T + b[rows])


@pytest.mark.parametrize("B, L, E, H", [(2, 5, 12, 3), (1, 3, 8, 8), (3, 4, 6, 1)])
def test_trace_has_the_shapes_of_the_table(B, L, E, H, device):
    mha = MultiHeadAttention(E, H).to(device)
    x = torch.randn(B, L, E).to(device)
    trace = {}
    out, weights = mha(x, trace=trace)
    d = E // H
    expected = {
        "X": (B, L, E),
        "Q": (B, L, E),
        "K": (B, L, E),
        "V": (B, L, E),
        "Q_h": (B, H, L, d),
        "K_h": (B, H, L, d),
        "V_h": (B, H, L, d),
        "scores": (B, H, L, L),
        "weights": (B, H, L, L),
        "heads": (B, H, L, d),
        "merged": (B, L, E),
        "output": (B, L, E),
    }
    assert {k: tuple(v.shape) for k, v in trace.items()} == expected
    assert trace["X"] is x  # X itself is never split
    assert trace["output"] is out and trace["weights"] is weights


def test_merge_heads_undoes_split_heads(device, dtype):
    mha = MultiHeadAttention(12, 3).to(device)
    t = torch.randn(2, 5, 12, dtype=dtype).to(device)
    assert torch.equal(mha.merge_heads(mha.split_heads(t)), t)
    assert torch.equal(mha.split_heads(t)[:, 1], t[..., 4:8])  # head 1: columns 4-7


def test_masked_positions_get_exactly_zero_weight(device):
    mha = CheckedMultiHeadAttention(12, 3).to(device)
    B, L = 2, 5
    kwargs = masks("causal+padding", B, L, device)
    _, weights = mha(torch.randn(B, L, 12).to(device), **kwargs)
    hidden = kwargs["attn_mask"][None, None] | kwargs["key_padding_mask"][:, None, None, :]
    assert bool((weights[hidden.expand_as(weights)] == 0).all())
    assert_close(weights.sum(dim=-1), torch.ones(B, 3, L, device=device))


def test_head_by_head_loop_equals_the_batched_module(head_by_head):
    ns = head_by_head
    E, H = ns["d_model"], ns["H"]
    mha = MultiHeadAttention(E, H, bias=False).to(ns["device"])
    with torch.no_grad():
        mha.in_proj.weight.copy_(torch.cat(ns["W_Q"] + ns["W_K"] + ns["W_V"], dim=1).T)
        mha.out_proj.weight.copy_(ns["W_O"].T)
    out, weights = mha(ns["X"][None])  # the core module takes a batch
    assert_close(out[0], ns["output"])
    assert_close(weights[0], torch.stack(ns["weights"]))


def test_head_by_head_heads_each_match_sdpa(head_by_head):
    ns = head_by_head
    X = ns["X"]
    for i in range(ns["H"]):
        Q, K, V = X @ ns["W_Q"][i], X @ ns["W_K"][i], X @ ns["W_V"][i]
        assert_close(ns["heads"][i], F.scaled_dot_product_attention(Q, K, V))
    assert not torch.allclose(ns["weights"][0], ns["weights"][1])  # the page: two different tables


def test_changing_one_head_changes_its_concat_slice_but_every_output_column(chapter):
    d, E = chapter["d_k"], chapter["mha"].embed_dim
    changed = chapter["changed"]
    assert changed(chapter["before"]["merged"], chapter["after"]["merged"]) == list(range(d))
    assert changed(chapter["before"]["output"], chapter["after"]["output"]) == list(range(E))


def test_w_o_is_a_sum_of_per_head_maps(chapter):
    # the FAQ's Q13: Concat(heads) W^O = sum_i head_i W^O_i, W^O_i the d_k rows of W^O for head i
    mha, d, H = chapter["mha"], chapter["d_k"], chapter["mha"].num_heads
    heads, concat = chapter["before"]["heads"], chapter["before"]["merged"]
    W_O = mha.out_proj.weight.T  # (E, E): the formula's W^O
    per_head = sum(heads[:, i] @ W_O[i * d : (i + 1) * d] for i in range(H))
    assert_close(concat @ W_O, per_head)
    assert_close(mha.out_proj(concat), per_head + mha.out_proj.bias)


def parameter_count(module):
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("E, H", [(512, 8), (512, 1), (512, 16), (12, 3), (64, 4)])
def test_parameter_count_is_4_e_squared_plus_4_e(E, H):
    for bias, formula in [(True, 4 * E * E + 4 * E), (False, 4 * E * E)]:
        assert parameter_count(nn.MultiheadAttention(E, H, bias=bias)) == formula
        assert parameter_count(MultiHeadAttention(E, H, bias=bias)) == formula


def test_parameter_counts_of_nn_multihead_attention_512_8():
    # the corrected numbers of the source article's FAQ Q14
    assert parameter_count(nn.MultiheadAttention(512, 8)) == 1_050_624
    assert parameter_count(nn.MultiheadAttention(512, 8, bias=False)) == 1_048_576


def test_parameter_shapes_section_lists_what_the_count_adds_up():
    # the FAQ's Q14 shows this section after the parameters one
    printed = io.StringIO()
    run_snippet("multi_head/multi_head_attention.py", stdout=printed)
    lines = printed.getvalue().splitlines()
    listed = lines[lines.index("4·d_model²             = 1,048,576") + 1 :]
    E = 512
    assert listed == [
        f"in_proj_weight   {(3 * E, E)}",
        f"in_proj_bias     {(3 * E,)}",
        f"out_proj.weight  {(E, E)}",
        f"out_proj.bias    {(E,)}",
    ]
    assert (
        3 * E * E + 3 * E + E * E + E == parameter_count(nn.MultiheadAttention(E, 8)) == 1_050_624
    )


def test_state_dict_layout_matches_pytorch_shapes():
    ours = {k: tuple(v.shape) for k, v in MultiHeadAttention(12, 3).state_dict().items()}
    theirs = {k: tuple(v.shape) for k, v in nn.MultiheadAttention(12, 3).state_dict().items()}
    renamed = {"in_proj_weight": "in_proj.weight", "in_proj_bias": "in_proj.bias"}
    assert {renamed.get(k, k): v for k, v in theirs.items()} == ours


x5 = torch.ones(2, 5, 12)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m(torch.ones(12)), ValueError, "got shape (12,)"),
        (lambda m: m(torch.ones(1, 2, 5, 12)), ValueError, "got shape (1, 2, 5, 12)"),
        (
            lambda m: m(torch.ones(2, 5, 10)),
            ValueError,
            "x (2, 5, 10) has d_model = 10, expected embed_dim = 12",
        ),
        (lambda m: m(torch.ones(2, 0, 12)), ValueError, "got shape (2, 0, 12)"),
        (lambda m: m(torch.ones(0, 5, 12)), ValueError, "got shape (0, 5, 12)"),
        (lambda m: m(torch.ones(0, 12)), ValueError, "got shape (0, 12)"),
        (
            lambda m: m(torch.ones(2, 5, 12, dtype=torch.int64)),
            TypeError,
            "torch.int64, shape (2, 5, 12)",
        ),
        (
            lambda m: CheckedMultiHeadAttention(10, 3),
            ValueError,
            "embed_dim = 10 is not divisible by num_heads = 3",
        ),
        (lambda m: CheckedMultiHeadAttention(12, 0), ValueError, "num_heads = 0"),
        (lambda m: m(x5, attn_mask=torch.zeros(5, 5)), TypeError, "attn_mask must be bool"),
        (
            lambda m: m(x5, attn_mask=torch.zeros(4, 4, dtype=torch.bool)),
            ValueError,
            "attn_mask must have shape (5, 5) for x of shape (2, 5, 12), got (4, 4)",
        ),
        (
            lambda m: m(x5, key_padding_mask=torch.zeros(5, dtype=torch.bool)),
            ValueError,
            "key_padding_mask must have shape (2, 5) for x of shape (2, 5, 12), got (5,)",
        ),
        (
            lambda m: check_input(torch.ones(3, 4), 4, key_padding_mask=torch.zeros(3)),
            TypeError,
            "torch.float32",
        ),
    ],
    ids=[
        "wrong-rank-1d",
        "wrong-rank-4d",
        "mismatched-embed-dim",
        "empty-sequence",
        "empty-batch",
        "unbatched-empty",
        "non-float",
        "e-not-divisible-by-h",
        "zero-heads",
        "float-mask",
        "attn-mask-shape",
        "padding-mask-shape",
        "check-input-padding-dtype",
    ],
)
def test_bad_input_raises_error_naming_the_shapes(call, error, message):
    with pytest.raises(error) as info:
        call(CheckedMultiHeadAttention(12, 3))
    assert message in str(info.value)


@pytest.mark.parametrize(
    "page", ["multi-head.zh.md", "shapes.zh.md", "multi-head.en.md", "shapes.en.md"]
)
def test_reader_blocks_never_import_snippets(page):
    for block in Page(DOCS / page).blocks:
        assert "snippets" not in block.code, block.code


def svg(name, lang="zh"):
    from qkvsite.figures import load_all, render

    load_all()
    return render(name, lang).decode("utf-8")


def test_flow_figure_shows_the_shapes_of_a_traced_run():
    from qkvsite.figures import run_example

    trace = run_example("multi_head/multi_head_attention.py")["trace"]
    drawn = svg("multi-head-flow")
    for name in ["X", "Q", "Q_h", "weights", "heads", "merged", "output"]:
        assert str(tuple(trace[name].shape)) in drawn, name
    B, H, L, d = trace["Q_h"].shape
    assert f"(B, L, d_k) = {(B, L, d)}" in drawn  # one head's Q_i, K_i, V_i
    assert "第 0 个头" in drawn and "head 0" in svg("multi-head-flow", "en")
    assert H == 3  # the alt texts: "three heads", "three arrows leave X"


def test_head_weights_figure_shows_the_computed_weights(head_by_head):
    # the alt texts: "two 5×5 heat maps", one per head
    assert [tuple(w.shape) for w in head_by_head["weights"]] == [(5, 5), (5, 5)]
    drawn = svg("head-weights")
    for weights in head_by_head["weights"]:
        for v in weights.flatten().tolist():
            assert f">{v:.2f}<" in drawn


# --- exercises -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exercises():
    """Variables of exercises.py after it ran (its preamble rebuilds the page's mha and x)."""
    return run_script("exercises.py")


def test_head_2_of_512_8_uses_rows_640_to_703_for_w_k_and_columns_128_to_191_of_out_proj():
    # exercise 1: d_k = 64; in_proj_weight (1536, 512); W_2^K = rows 640..703; W^O's rows =
    # out_proj.weight columns
    torch.manual_seed(0)
    E, H = 512, 8
    assert tuple(nn.MultiheadAttention(E, H).in_proj_weight.shape) == (1536, 512)
    mha = MultiHeadAttention(E, H)
    assert mha.head_dim == 64
    x = torch.randn(1, 3, E)
    trace = {}
    out, _ = mha(x, trace=trace)
    W, b = mha.in_proj.weight, mha.in_proj.bias
    assert_close(trace["K_h"][:, 2], x @ W[640:704].T + b[640:704])
    W_O = mha.out_proj.weight
    per_head = sum(trace["heads"][:, h] @ W_O[:, h * 64 : (h + 1) * 64].T for h in range(H))
    assert_close(out, per_head + mha.out_proj.bias)
    assert_close(trace["merged"][..., 128:192], trace["heads"][:, 2])


def test_exercise_script_one_head_with_the_same_parameters_keeps_q_k_v_not_the_output(exercises):
    three, one = exercises["three_heads"], exercises["one_head"]
    for name in "QKV":
        assert torch.equal(three[name], one[name])
    assert not torch.allclose(three["output"], one["output"], atol=1e-2)
    assert_close(one["scores"][:, 0], three["scores"].sum(dim=1) / 3**0.5)


@pytest.mark.parametrize("E, H", [(12, 3), (16, 4), (8, 8)])
def test_one_head_scores_are_the_sum_of_the_h_heads_scores_over_sqrt_h(E, H, device, dtype):
    torch.manual_seed(0)
    many = MultiHeadAttention(E, H).to(device, dtype)
    one = MultiHeadAttention(E, 1).to(device, dtype)
    one.load_state_dict(many.state_dict())  # H is in no parameter shape
    x = torch.randn(2, 5, E, dtype=dtype).to(device)
    t_many, t_one = {}, {}
    many(x, trace=t_many)
    one(x, trace=t_one)
    assert_close(t_one["Q"], t_many["Q"])
    assert_close(t_one["scores"][:, 0], t_many["scores"].sum(dim=1) / H**0.5)
    assert not torch.allclose(t_one["output"], t_many["output"], atol=1e-2)


def test_nn_multihead_attention_with_one_head_and_the_same_state_dict_computes_another_output(
    device, dtype
):
    torch.manual_seed(0)
    three = nn.MultiheadAttention(12, 3, batch_first=True, dtype=dtype).to(device)
    one = nn.MultiheadAttention(12, 1, batch_first=True, dtype=dtype).to(device)
    one.load_state_dict(three.state_dict())
    x = torch.randn(2, 5, 12, dtype=dtype).to(device)
    assert not torch.allclose(one(x, x, x)[0], three(x, x, x)[0], atol=1e-2)


def permuted_heads(ref, order, move_w_o=True):
    """A copy of nn.MultiheadAttention `ref` whose head h is ref's head order[h]."""
    E, H = ref.embed_dim, ref.num_heads
    d = E // H
    block = torch.cat([torch.arange(h * d, (h + 1) * d) for h in order]).to(
        ref.in_proj_weight.device
    )
    rows = torch.cat([block, E + block, 2 * E + block])
    new = copy.deepcopy(ref)
    with torch.no_grad():
        new.in_proj_weight.copy_(ref.in_proj_weight[rows])
        new.in_proj_bias.copy_(ref.in_proj_bias[rows])
        if move_w_o:
            new.out_proj.weight.copy_(ref.out_proj.weight[:, block])
    return new


@pytest.mark.parametrize("E, H, order", [(12, 3, [2, 1, 0]), (16, 4, [3, 0, 2, 1])])
def test_permuting_heads_with_their_w_o_rows_leaves_nn_multihead_attention_unchanged(
    E, H, order, device, dtype
):
    ref, _ = pytorch_and_ours(E, H, device, dtype)
    x = torch.randn(2, 5, E, dtype=dtype).to(device)
    out, weights = ref(x, x, x, average_attn_weights=False)
    new_out, new_weights = permuted_heads(ref, order)(x, x, x, average_attn_weights=False)
    assert_close(new_out, out)
    assert_close(new_weights, weights[:, order])
    stale_out, _ = permuted_heads(ref, order, move_w_o=False)(x, x, x)
    assert not torch.allclose(stale_out, out, atol=1e-2)


def test_exercise_script_cross_attention_weights_are_h_by_l_q_by_l_k(exercises):
    ns = exercises  # the cross-attention section runs last
    assert tuple(ns["weights"].shape) == (2, 3, 5, 7) and tuple(ns["out"].shape) == (2, 5, 12)
    assert_close(ns["out"], ns["theirs"])
    assert_close(ns["weights"], ns["their_weights"])


@pytest.mark.parametrize("L_q, L_k", [(3, 7), (5, 1), (4, 4)])
def test_cross_attention_from_the_in_proj_blocks_equals_nn_multihead_attention(
    L_q, L_k, device, dtype
):
    E, H = 12, 3
    d = E // H
    ref, ours = pytorch_and_ours(E, H, device, dtype)
    x = torch.randn(2, L_q, E, dtype=dtype).to(device)
    memory = torch.randn(2, L_k, E, dtype=dtype).to(device)
    w_q, w_k, w_v = ref.in_proj_weight.chunk(3)
    b_q, b_k, b_v = ref.in_proj_bias.chunk(3)
    Q_h = ours.split_heads(x @ w_q.T + b_q)
    K_h, V_h = ours.split_heads(memory @ w_k.T + b_k), ours.split_heads(memory @ w_v.T + b_v)
    weights = torch.softmax(Q_h @ K_h.mT / d**0.5, dim=-1)
    out = ref.out_proj(ours.merge_heads(weights @ V_h))
    expected_out, expected_weights = ref(x, memory, memory, average_attn_weights=False)
    assert weights.shape == (2, H, L_q, L_k) and out.shape == (2, L_q, E)
    assert_close(out, expected_out)
    assert_close(weights, expected_weights)
    assert_close(F.scaled_dot_product_attention(Q_h, K_h, V_h), weights @ V_h)


def test_one_row_of_weights_blends_what_two_heads_keep_apart():
    ns = run_snippet("multi_head/two_views.py")
    V, referent, state, shared = ns["V"], ns["referent"], ns["state"], ns["shared"]
    assert ns["tokens"] == ["animal", "street", "tired"]
    assert_close(shared.sum(), torch.tensor(1.0, device=shared.device))  # still one row of weights
    assert_close(referent @ V, V[0])  # animal, exactly
    assert_close(state @ V, V[2])  # tired, exactly
    assert_close(shared @ V, (V[0] + V[2]) / 2)  # one row: the average of the two
    assert ns["both"].shape == (2 * V.shape[1],)  # two heads: both readings, side by side


def test_the_teaser_figure_from_chapter_7_is_8_by_8():
    from snippets.learned_attention.reversal import L

    assert L == 8  # the alt text of Figure 4-3: "two 8 × 8 heatmaps"
