"""Chapter 1 (docs/dot-product.{zh,en}.md): snippets/dot_product/*, checked against PyTorch."""

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from snippets.dot_product.attention_without_parameters import (
    check_tokens,
    self_attention_without_parameters,
    similarity_weights,
    weighted_sum,
)
from tests.conftest import run_snippet


@pytest.fixture(scope="module")
def chapter():
    """Variables of the chapter's step-by-step script after it ran."""
    return run_snippet("dot_product/self_similarity.py")


def test_x_is_n_by_d_not_square(chapter):
    assert chapter["X"].shape == (len(chapter["tokens"]), 4)


def test_similarity_matrix_holds_every_pairwise_dot_product(chapter):
    X, S = chapter["X"], chapter["S"]
    n = X.shape[0]
    expected = torch.stack([torch.stack([torch.dot(X[i], X[j]) for j in range(n)]) for i in range(n)])
    assert_close(S, expected)
    assert_close(S, S.T)


def test_softmax_weights_are_positive_rows_summing_to_one(chapter):
    A = chapter["A"]
    assert bool((A > 0).all())
    assert_close(A.sum(dim=-1), torch.ones(A.shape[0], device=A.device))
    assert_close(A, F.softmax(chapter["S"], dim=1))


def test_weighted_sum_equals_pytorch_attention_without_scaling(chapter):
    X, Z = chapter["X"], chapter["Z"]
    assert_close(Z, F.scaled_dot_product_attention(X, X, X, scale=1.0))


def test_each_output_row_mixes_whole_rows_of_x(chapter):
    X, A, Z = chapter["X"], chapter["A"], chapter["Z"]
    for i in range(X.shape[0]):
        assert_close(Z[i], sum(A[i, j] * X[j] for j in range(X.shape[0])))


def test_softmax_of_the_example_scores_matches_the_corrected_figure(chapter):
    # The source article's figure 1-2 printed other numbers; these are softmax's.
    expected = torch.tensor([[0.924, 0.062, 0.014], [0.192, 0.703, 0.105], [0.105, 0.192, 0.703]])
    assert_close(chapter["weights"].cpu(), expected, atol=5e-4, rtol=0)


def test_softmax_keeps_the_order_of_scores_in_every_row(chapter):
    assert torch.equal(chapter["scores"].argsort(dim=-1), chapter["weights"].argsort(dim=-1))


def test_two_vectors_dot_product_and_cosine():
    ns = run_snippet("dot_product/two_vectors.py")
    cat, dog = ns["cat"], ns["dog"]
    assert_close(torch.dot(cat, dog), (cat * dog).sum())
    assert_close(ns["cos_cat_dog"], F.cosine_similarity(cat, dog, dim=0))
    assert torch.dot(cat, dog) > torch.dot(cat, cat)  # the page's point: length counts too


@pytest.mark.parametrize("shape", [(5, 8), (2, 5, 8), (2, 3, 4, 6)], ids=["unbatched", "batched", "4d"])
def test_self_attention_without_parameters_matches_sdpa(shape, device, dtype):
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=dtype).to(device)
    assert_close(self_attention_without_parameters(x), F.scaled_dot_product_attention(x, x, x, scale=1.0))


def test_similarity_weights_rows_sum_to_one(device, dtype):
    x = torch.randn(2, 7, 3, dtype=dtype).to(device)
    weights = similarity_weights(x)
    assert weights.shape == (2, 7, 7)
    assert_close(weights.sum(dim=-1), torch.ones(2, 7, dtype=dtype, device=device))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: similarity_weights(torch.ones(4)), ValueError, "got (4,)"),
        (lambda: similarity_weights(torch.ones(0, 4)), ValueError, "got shape (0, 4)"),
        (lambda: similarity_weights(torch.ones(3, 0)), ValueError, "got shape (3, 0)"),
        (lambda: similarity_weights(torch.ones(3, 4, dtype=torch.int64)), TypeError, "torch.int64, shape (3, 4)"),
        (lambda: weighted_sum(torch.ones(3, 3), torch.ones(4, 2)), ValueError, "(3, 3) has 3 columns but x (4, 2)"),
        (lambda: weighted_sum(torch.ones(3), torch.ones(3, 2)), ValueError, "weights must be (n, d)"),
        (lambda: weighted_sum(torch.ones(2, 0), torch.ones(0, 2)), ValueError, "got shape (2, 0)"),
        (lambda: weighted_sum(torch.ones(3, 3), torch.ones(3, 2, dtype=torch.int32)), TypeError, "(3, 2)"),
        (lambda: self_attention_without_parameters(torch.ones(2, 0, 4)), ValueError, "(2, 0, 4)"),
        (lambda: check_tokens("q", torch.tensor(1.0)), ValueError, "q must be (n, d)"),
    ],
    ids=[
        "wrong-rank",
        "empty-sequence",
        "no-features",
        "non-float",
        "mismatched-sizes",
        "weights-wrong-rank",
        "weights-empty",
        "x-non-float",
        "batched-empty-sequence",
        "scalar",
    ],
)
def test_bad_input_raises_error_naming_the_shapes(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)
