"""Chapter 5 (docs/shapes.{zh,en}.md): the shape table and the common shape bugs, checked with
PyTorch."""

import itertools

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.testing import assert_close

from qkvsite.config import DOCS
from qkvsite.dialect import Page
from snippets.multi_head.multi_head_attention import MultiHeadAttention
from tests.conftest import run_snippet


def run_script(name):
    return run_snippet(f"shapes/{name}")


@pytest.fixture(scope="module")
def table():
    return run_script("shape_table.py")


# the page's table, as letters: each step's shape in terms of B, L, d_model, H
TABLE = {
    "X": "B L d_model",
    "Q": "B L d_model",
    "K": "B L d_model",
    "V": "B L d_model",
    "Q_h": "B H L d_k",
    "K_h": "B H L d_k",
    "V_h": "B H L d_k",
    "scores": "B H L L",
    "weights": "B H L L",
    "heads": "B H L d_k",
    "merged": "B L d_model",
    "output": "B L d_model",
}


def sizes(letters, B, L, E, H):
    value = {"B": B, "L": L, "d_model": E, "H": H, "d_k": E // H}
    return tuple(value[s] for s in letters.split())


def test_table_script_traces_the_chapter_4_module(table):
    assert list(table["steps"]) == list(TABLE)
    B, L, E, H = table["B"], table["L"], table["d_model"], table["H"]
    for name, letters in TABLE.items():
        assert tuple(table["trace"][name].shape) == sizes(letters, B, L, E, H), name
    assert table["trace"]["X"] is table["x"]  # X goes in as it is: never split


@pytest.mark.parametrize("B, L, E, H", [(2, 5, 12, 3), (1, 7, 8, 2), (4, 3, 16, 16), (3, 6, 10, 1)])
def test_table_holds_for_other_sizes(B, L, E, H, device):
    trace = {}
    MultiHeadAttention(E, H).to(device)(torch.randn(B, L, E).to(device), trace=trace)
    assert {k: tuple(v.shape) for k, v in trace.items()} == {
        k: sizes(v, B, L, E, H) for k, v in TABLE.items()
    }


def test_single_head_keeps_a_head_dimension_of_size_one(table):
    B, L, E = table["B"], table["L"], table["d_model"]
    assert tuple(table["single"]["Q_h"].shape) == (B, 1, L, E)
    assert tuple(table["single"]["scores"].shape) == (B, 1, L, L)


def test_page_shows_chapter_4_module_before_the_table():
    blocks = Page(DOCS / "shapes.zh.md").blocks
    assert "class MultiHeadAttention" in blocks[0].code and not blocks[0].continues
    assert blocks[1].continues and "trace" in blocks[1].code
    for block in blocks:
        assert "snippets" not in block.code


def test_forgetting_to_transpose_k_raises_when_l_differs_from_d_k(device):
    Q, K = torch.randn(2, 3, 5, 4).to(device), torch.randn(2, 3, 5, 4).to(device)
    with pytest.raises(RuntimeError, match=r"batch2 tensor to be: \[6, 4\] but got: \[6, 5\]"):
        Q @ K


def test_transposed_scores_hold_every_query_key_dot_product():
    # the FAQ's Q6 shows this section after the error one
    ns = run_script("transpose_k.py")
    scores = ns["scores"]  # the batched (B, H, L, L) scores; the square section reuses Q and K
    torch.manual_seed(0)
    B, H, L, d_k = scores.shape[0], scores.shape[1], scores.shape[2], 4
    Q = torch.randn(B, H, L, d_k).to(scores.device)  # the error section's Q and K, drawn again
    K = torch.randn(B, H, L, d_k).to(scores.device)
    assert_close(scores, torch.einsum("bhid,bhjd->bhij", Q, K))
    assert_close(scores[0, 0, 1, 2], torch.dot(ns["q_1"], ns["k_2"]))


def test_k_mt_swaps_only_the_last_two_dimensions(device, dtype):
    K = torch.randn(2, 3, 5, 4, dtype=dtype).to(device)
    assert torch.equal(K.mT, K.transpose(-2, -1))
    assert K.mT.shape == (2, 3, 4, 5)
    # what K.T would do: reverse every dimension
    assert K.permute(3, 2, 1, 0).shape == (4, 5, 3, 2)


def test_forgetting_to_transpose_k_is_silently_wrong_when_square(device, dtype):
    ns = run_script("transpose_k.py")
    Q, K = ns["Q"], ns["K"]
    assert ns["wrong"].shape == ns["right"].shape
    assert not torch.allclose(ns["wrong"], ns["right"])
    # the transposed product is what attention uses: compare with sdpa on a one-hot V
    q, k = Q.to(device, dtype), K.to(device, dtype)
    L = q.shape[0]
    weights = F.scaled_dot_product_attention(
        q, k, torch.eye(L, dtype=dtype, device=q.device), scale=1.0
    )
    assert_close(weights, torch.softmax(q @ k.T, dim=-1))
    assert not torch.allclose(weights, torch.softmax(q @ k, dim=-1))


def test_view_after_transpose_fails_and_reshape_equals_contiguous_view(device, dtype):
    heads = torch.randn(2, 3, 5, 4, dtype=dtype).to(device)
    t = heads.transpose(1, 2)
    assert not t.is_contiguous()
    with pytest.raises(RuntimeError, match=r"Use \.reshape\(\.\.\.\) instead"):
        t.view(2, 5, 12)
    assert torch.equal(t.reshape(2, 5, 12), t.contiguous().view(2, 5, 12))


def mergeable(t, i):
    """view's condition for merging dimensions i and i + 1: the outer stride is the inner stride
    times its size."""
    return t.stride(i) == t.stride(i + 1) * t.size(i + 1)


def test_view_after_transpose_fails_only_where_the_merged_strides_do_not_line_up(device):
    heads = torch.randn(2, 3, 5, 4).to(device)
    t = heads.transpose(1, 2)  # the page's failing case: (B, L, H, d_k), strides (60, 4, 20, 1)
    assert t.stride() == (60, 4, 20, 1) and not t.is_contiguous()
    assert not mergeable(t, 2)  # H and d_k: 20 != 1 * 4
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(2, 5, 12)
    # every permutation, every pair of neighbours: view merges exactly when the strides line up
    for p in itertools.permutations(range(4)):
        x = heads.permute(p)
        for i in range(3):
            shape = (*x.shape[:i], x.shape[i] * x.shape[i + 1], *x.shape[i + 2 :])
            if mergeable(x, i):
                merged = x.view(shape)
                assert merged.data_ptr() == x.data_ptr() and torch.equal(merged, x.reshape(shape))
            else:
                with pytest.raises(RuntimeError, match="view size is not compatible"):
                    x.view(shape)


def test_view_after_transpose_splits_and_merges_the_dimensions_the_transpose_left_alone(
    device, dtype
):
    heads = torch.randn(2, 3, 5, 4, dtype=dtype).to(device)
    B, H, L, d_k = heads.shape
    t = heads.transpose(1, 2)
    split = t.view(B, L, H, 2, d_k // 2)  # splitting a dimension always works
    assert split.data_ptr() == t.data_ptr() and torch.equal(split, t.reshape(B, L, H, 2, d_k // 2))
    ht = heads.transpose(-2, -1)  # (B, H, d_k, L): B and H untouched
    assert not ht.is_contiguous() and ht.stride() == (60, 20, 1, 4) and mergeable(ht, 0)
    folded = ht.view(B * H, d_k, L)
    assert folded.data_ptr() == ht.data_ptr()  # no copy
    for b in range(B):
        for h in range(H):
            assert torch.equal(folded[b * H + h], heads[b, h].T)
    # the folded matrices are the ones the batched product uses: the scores come out the same
    q = torch.randn(B, H, L, d_k, dtype=dtype).to(device)
    assert_close((q.reshape(B * H, L, d_k) @ folded).view(B, H, L, L), q @ heads.mT)


def test_page_view_ok_section_views_without_copying():
    ns = run_script("view_and_reshape.py")
    assert ns["ht"].stride() == (60, 20, 1, 4) and not ns["ht"].is_contiguous()
    assert ns["same_memory"] and tuple(ns["folded"].shape) == (6, 4, 5)


def test_view_merges_a_dimension_of_size_one_whatever_its_stride():
    # the size-1 dimension has a stride that fits nothing
    x = torch.arange(12).as_strided((3, 1, 4), (4, 100, 1))
    assert not mergeable(x, 0) and not mergeable(x, 1)
    assert torch.equal(x.view(3, 4), torch.arange(12).view(3, 4))
    assert torch.equal(x.view(12), torch.arange(12))
    # the summary's exception holds for the outer dimension too: (1, 3, 4) with a stride of 100 for
    # the size-1 one
    y = torch.arange(12).as_strided((1, 3, 4), (100, 4, 1))
    assert not mergeable(y, 0) and torch.equal(y.view(3, 4), torch.arange(12).view(3, 4))


@pytest.mark.parametrize("H", [2, 3, 4])
def test_padding_mask_b_1_1_l_hides_the_padded_keys_of_its_sequence_in_every_head(H, device):
    B, L = 2, 5
    padding = torch.zeros(B, L, dtype=torch.bool, device=device)
    padding[1, -2:] = True
    scores = torch.randn(B, H, L, L).to(device)
    masked = scores.masked_fill(padding[:, None, None, :], float("-inf"))
    assert torch.equal(masked.isinf(), padding[:, None, None, :].expand(B, H, L, L))


def test_exercise_wrong_padding_mask_raises_unless_b_equals_h_then_masks_the_wrong_heads():
    ns = run_script("exercises.py")
    hidden_keys, right, wrong = ns["hidden_keys"], ns["right"], ns["wrong"]
    assert tuple(right.shape) == (2, 1, 1, 5) and tuple(wrong.shape) == (2, 1, 5)
    assert hidden_keys(3, right) == [[1, 0], [1, 1], [1, 2]]  # sequence 1, every head
    message = r"tensor a \(2\) must match the size of tensor b \(3\) at non-singleton dimension 1"
    with pytest.raises(RuntimeError, match=message):
        hidden_keys(3, wrong)
    # B == H: no error; sequence 1's padding lands on head 1 of both sequences
    assert hidden_keys(2, wrong) == [[0, 1], [1, 1]]


def test_exercise_error_message_reads_as_b_times_h_then_d_k_then_l(device):
    B, H, L, d_k = 2, 8, 128, 64
    Q, K = torch.randn(B, H, L, d_k).to(device), torch.randn(B, H, L, d_k).to(device)
    message = (
        r"Expected size for first two dimensions of batch2 tensor to be: \[16, 64\] but got: "
        r"\[16, 128\]\."
    )
    with pytest.raises(RuntimeError, match=message):
        Q @ K
    assert (Q @ K.mT).shape == (B, H, L, L) and H * d_k == 512


def test_exercise_total_of_the_weights_does_not_catch_the_wrong_softmax_dim(device, dtype):
    ns = run_script("exercises.py")
    scores = ns["scores"].to(device, dtype)
    B, H, L, _ = scores.shape
    total = torch.tensor(float(B * H * L), dtype=dtype, device=scores.device)
    ones = torch.ones(B, H, L, dtype=dtype, device=scores.device)
    for dim in (-1, -2):
        assert_close(torch.softmax(scores, dim=dim).sum(), total)
    assert_close(torch.softmax(scores, dim=-1).sum(dim=-1), ones)
    assert not torch.allclose(torch.softmax(scores, dim=-2).sum(dim=-1), ones)


def test_exercise_batch_check_flags_the_default_layout_only():
    ns = run_script("exercises.py")
    x, y = ns["x"], ns["y"]
    assert torch.equal(x[0], y[0]) and not torch.equal(x[1], y[1])
    E, H = ns["d_model"], ns["H"]
    default = nn.MultiheadAttention(E, H).to(x.device)
    fixed = nn.MultiheadAttention(E, H, batch_first=True).to(x.device)
    fixed.load_state_dict(default.state_dict())
    assert ns["sample_0_change"](default) > 0.01  # attends across the batch
    assert ns["sample_0_change"](fixed) < 1e-5


def test_page_split_example_mixes_tokens_only_when_viewed_directly():
    ns = run_script("view_and_reshape.py")
    x, right, wrong, E = ns["x"], ns["right"], ns["wrong"], ns["d_model"]
    tokens_right = right // E  # which token every number came from: row i is token i
    assert bool((tokens_right == torch.arange(ns["L"], device=x.device)[:, None]).all())
    assert not torch.equal(wrong // E, tokens_right)
    assert torch.equal(ns["merged_right"], x)
    assert not torch.equal(ns["merged_wrong"], x)


@pytest.mark.parametrize("B, L, E, H", [(2, 5, 12, 3), (1, 3, 4, 2), (3, 4, 8, 4)])
def test_split_then_merge_round_trips_only_in_the_right_order(B, L, E, H, device, dtype):
    x = torch.randn(B, L, E, dtype=dtype).to(device)
    d = E // H
    right = x.view(B, L, H, d).transpose(1, 2)
    assert torch.equal(right.transpose(1, 2).reshape(B, L, E), x)
    assert not torch.equal(x.view(B, H, L, d), right)
    assert not torch.equal(right.reshape(B, L, E), x)
    mha = MultiHeadAttention(E, H)
    assert torch.equal(mha.split_heads(x), right)


def test_softmax_over_the_last_dim_is_attention_and_other_dims_are_not(device, dtype):
    ns = run_script("softmax_dim.py")
    scores = ns["scores"].to(device, dtype)
    ones = torch.ones(scores.shape[:-1], dtype=dtype, device=scores.device)
    right = torch.softmax(scores, dim=-1)
    assert_close(right.sum(dim=-1), ones)
    assert not torch.allclose(torch.softmax(scores, dim=-2).sum(dim=-1), ones)
    assert not torch.allclose(torch.softmax(scores, dim=1).sum(dim=-1), ones)
    # with V = identity, sdpa returns its weights: they are the dim=-1 softmax
    L = scores.shape[-1]
    eye = torch.eye(L, dtype=dtype, device=scores.device).expand_as(scores)
    q = scores  # q @ eye.T = scores, so sdpa(q, I, I, scale=1) = softmax(scores) @ I
    assert_close(F.scaled_dot_product_attention(q, eye, eye, scale=1.0), right)


def test_default_layout_attends_across_the_batch(device, dtype):
    torch.manual_seed(0)
    B, L, E, H = 2, 5, 12, 3
    default = nn.MultiheadAttention(E, H, dtype=dtype).to(device)
    fixed = nn.MultiheadAttention(E, H, batch_first=True, dtype=dtype).to(device)
    fixed.load_state_dict(default.state_dict())
    x = torch.randn(B, L, E, dtype=dtype).to(device)
    y = x.clone()
    y[1] = torch.randn(L, E, dtype=dtype)  # change only sample 1
    wrong_x, weights = default(x, x, x)
    wrong_y, _ = default(y, y, y)
    assert weights.shape == (L, B, B)  # L is read as the batch, B as the length
    assert not torch.allclose(wrong_x[0], wrong_y[0])  # sample 0 depends on sample 1
    right_x, _ = fixed(x, x, x)
    right_y, _ = fixed(y, y, y)
    assert_close(right_x[0], right_y[0])  # with batch_first=True it does not
    assert_close(
        default(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))[0].transpose(0, 1), right_x
    )


def test_batch_first_page_example_outputs_differ():
    # also the FAQ's Q16: the minimal call, right and wrong
    ns = run_script("batch_first.py")
    B, L, E = ns["B"], ns["L"], ns["d_model"]
    assert tuple(ns["weights"].shape) == (L, B, B)
    # the wrong layout keeps the shape
    assert ns["out"].shape == ns["out_fixed"].shape == (B, L, E)
    assert not torch.allclose(ns["out"], ns["out_fixed"], atol=1e-5)
    assert tuple(ns["weights_fixed"].shape) == (B, L, L)
    assert ns["out_lbe"].shape == (L, B, E)
    assert_close(ns["out_lbe"].transpose(0, 1), ns["out_fixed"])


def test_split_heads_figure_shows_the_numbers_and_their_tokens():
    from qkvsite.figures import load_all, render, run_example

    load_all()
    ns = run_example("shapes/view_and_reshape.py")
    drawn = render("split-heads", "zh").decode("utf-8")
    # the alt texts: x is 3 tokens × 4 features; each head of the direct view mixes tokens
    x, wrong, E = ns["x"], ns["wrong"], ns["d_model"]
    assert tuple(x.shape) == (1, 3, 4)
    for head in wrong[0]:
        assert len(set((head // E).flatten().tolist())) > 1
    for v in ns["x"].flatten().tolist():
        assert f">{v}<" in drawn
    assert "词元0" in drawn and "token 0" in render("split-heads", "en").decode("utf-8")


def test_merge_memory_figure_shows_where_t_lies_in_memory():
    from qkvsite.figures import load_all, render, run_example

    load_all()
    t = run_example("shapes/view_and_reshape.py")["t"]
    _, L, H, d_k = t.shape
    s_l, s_h, s_c = t.stride()[1:]
    row = [h * s_h + c * s_c for h in range(H) for c in range(d_k)]  # token 0's merged row
    steps = {b - a for a, b in zip(row[:-1], row[1:], strict=True)}
    # the caption: the step is 1 inside a head and a jump between heads, so no single stride
    assert s_c == 1 and len(steps) == 2 and max(steps) > 1
    drawn = render("merge-memory", "en").decode("utf-8")
    for i in range(L):
        for offset in row:
            assert f">{i * s_l + offset}<" in drawn
    assert "token 0" in drawn and "词元0" in render("merge-memory", "zh").decode("utf-8")
