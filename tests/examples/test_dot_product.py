"""Chapter 1 (docs/dot-product.{zh,en}.md): snippets/dot_product/*, checked against PyTorch."""

import re

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from qkvsite.config import DOCS
from snippets.dot_product.attention_without_parameters import (
    check_tokens,
    checked_self_attention,
    self_attention_without_parameters,
    similarity_weights,
    weighted_sum,
)
from tests.conftest import run_snippet


@pytest.fixture(scope="module")
def chapter():
    """Variables of the chapter's step-by-step script after it ran."""
    return run_snippet("dot_product/self_similarity.py")


@pytest.fixture(scope="module")
def exercises():
    """Variables of the exercises' script (snippets/dot_product/exercises.py) after it ran."""
    return run_snippet("dot_product/exercises.py")


def test_x_is_n_by_d_not_square(chapter):
    assert chapter["X"].shape == (len(chapter["tokens"]), 4)


def test_similarity_matrix_holds_every_pairwise_dot_product(chapter):
    X, S = chapter["X"], chapter["S"]
    n = X.shape[0]
    expected = torch.stack(
        [torch.stack([torch.dot(X[i], X[j]) for j in range(n)]) for i in range(n)]
    )
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


def test_dot_product_ranks_the_longer_less_aligned_dog_above_cat_itself_but_cosine_does_not():
    # the glossary's "similarity" is the dot-product score: it counts the lengths, the cosine only
    # the angle
    ns = run_snippet("dot_product/two_vectors.py")
    cat, dog = ns["cat"], ns["dog"]
    assert dog.norm() > cat.norm()  # dog is the longer vector
    cos_dog = F.cosine_similarity(cat, dog, dim=0)
    cos_itself = F.cosine_similarity(cat, cat, dim=0)
    assert cos_dog < cos_itself  # and less aligned with cat than cat itself (cosine 1)
    assert_close(cos_itself, torch.ones((), device=cat.device))
    assert torch.dot(cat, dog) > torch.dot(cat, cat)  # yet the dot product ranks dog first
    assert_close(torch.dot(cat, dog), cat.norm() * dog.norm() * cos_dog)  # a · b = |a| |b| cos θ


def test_similarity_matrix_of_the_chapter_ranks_dog_first_in_the_cat_row_and_cosine_ranks_cat(
    chapter,
):
    X, S = chapter["X"], chapter["S"]
    cosines = F.cosine_similarity(X[:, None, :], X[None, :, :], dim=-1)
    assert int(S[0].argmax()) == 1  # cat's largest dot product is with dog
    assert torch.equal(cosines.argmax(dim=-1), torch.arange(X.shape[0], device=X.device))


def scale_links(lang):
    md = (DOCS / f"dot-product.{lang}.md").read_text(encoding="utf-8")
    return md, re.findall(r"\]\(scaled-dot-product\.md#([^)]+)\)", md)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_reason_for_the_scale_is_linked_to_chapter_3_section_3_6_not_the_next_chapter(lang):
    md, anchors = scale_links(lang)
    assert "下一章的缩放" not in md and "the next chapters (dividing by" not in md
    chapter_3 = (DOCS / f"scaled-dot-product.{lang}.md").read_text(encoding="utf-8")
    heading = re.search(r"^## 3\.6 .*\{ #([^ ]+) ", chapter_3, re.M)
    assert heading, "chapter 3 has a section 3.6 with an explicit anchor"
    assert anchors and set(anchors) == {heading.group(1)}


@pytest.mark.parametrize("d_k", [4, 16, 256])
def test_dot_products_grow_with_the_dimension_and_dividing_by_sqrt_d_k_undoes_it(
    d_k, device, dtype
):
    # the evidence chapter 3.6 gives for the scale: with unit-variance entries, var(q · k) = d_k
    g = torch.Generator().manual_seed(d_k)
    q, k = (torch.randn(10_000, d_k, generator=g, dtype=dtype).to(device) for _ in range(2))
    dots = (q * k).sum(dim=-1)
    expected = torch.tensor(float(d_k), dtype=dtype, device=device)
    assert_close(dots.var(), expected, rtol=0.1, atol=0)
    assert_close(
        (dots / d_k**0.5).var(), torch.ones((), dtype=dtype, device=device), rtol=0.1, atol=0
    )


def test_two_vectors_dot_product_and_cosine():
    ns = run_snippet("dot_product/two_vectors.py")
    cat, dog = ns["cat"], ns["dog"]
    assert_close(torch.dot(cat, dog), (cat * dog).sum())
    assert_close(ns["cos_cat_dog"], F.cosine_similarity(cat, dog, dim=0))
    assert torch.dot(cat, dog) > torch.dot(cat, cat)  # the page's point: length counts too


@pytest.mark.parametrize(
    "shape", [(5, 8), (2, 5, 8), (2, 3, 4, 6)], ids=["unbatched", "batched", "4d"]
)
def test_self_attention_without_parameters_matches_sdpa(shape, device, dtype):
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=dtype).to(device)
    assert_close(
        self_attention_without_parameters(x), F.scaled_dot_product_attention(x, x, x, scale=1.0)
    )


@pytest.mark.parametrize("shape", [(3, 4), (2, 5, 8)], ids=["unbatched", "batched"])
def test_the_robust_version_computes_what_the_three_line_idea_does(shape, device, dtype):
    # section 1.5: the checks change nothing for good input
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0), dtype=dtype).to(device)
    assert_close(checked_self_attention(x), self_attention_without_parameters(x))


def test_the_function_of_section_1_5_gives_section_1_4s_z(chapter):
    assert_close(self_attention_without_parameters(chapter["X"]), chapter["Z"])


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
        (
            lambda: similarity_weights(torch.ones(3, 4, dtype=torch.int64)),
            TypeError,
            "torch.int64, shape (3, 4)",
        ),
        (
            lambda: weighted_sum(torch.ones(3, 3), torch.ones(4, 2)),
            ValueError,
            "(3, 3) has 3 columns but x (4, 2)",
        ),
        (
            lambda: weighted_sum(torch.ones(3), torch.ones(3, 2)),
            ValueError,
            "weights must be (L, d)",
        ),
        (lambda: weighted_sum(torch.ones(2, 0), torch.ones(0, 2)), ValueError, "got shape (2, 0)"),
        (
            lambda: weighted_sum(torch.ones(3, 3), torch.ones(3, 2, dtype=torch.int32)),
            TypeError,
            "(3, 2)",
        ),
        (lambda: checked_self_attention(torch.ones(2, 0, 4)), ValueError, "(2, 0, 4)"),
        (lambda: check_tokens("q", torch.tensor(1.0)), ValueError, "q must be (L, d)"),
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


# --- exercises -------------------------------------------------------------------------------


def test_weights_are_not_symmetric_though_the_scores_are(chapter):
    # exercise 2: each row is divided by its own sum of exponentials
    S, A = chapter["S"], chapter["A"]
    assert_close(S, S.T)
    assert A[0, 1] > A[1, 0]
    row_sums = S.exp().sum(dim=-1)
    assert row_sums[1] > row_sums[0]
    assert_close(A[1, 0], S[1, 0].exp() / row_sums[1])


def test_softmax_ignores_a_shift_of_each_row_but_scaling_changes_how_concentrated_it_is(exercises):
    # exercise 3
    S, A = exercises["S"], exercises["A"]
    shift = torch.tensor([[10.0], [-3.0], [0.5]], device=S.device)
    assert_close(F.softmax(S + shift, dim=-1), A)
    assert_close(exercises["shifted"], A)
    top = A.amax(dim=-1)
    assert bool((F.softmax(2 * S, dim=-1).amax(dim=-1) > top).all())
    assert bool((F.softmax(S / 2, dim=-1).amax(dim=-1) < top).all())


def test_cosine_weights_put_every_words_largest_weight_on_itself_unlike_dot_products(exercises):
    # exercise 4
    X, A, A_cos = exercises["X"], exercises["A"], exercises["A_cos"]
    cosines = F.cosine_similarity(X[:, None, :], X[None, :, :], dim=-1)
    assert_close(A_cos, F.softmax(cosines, dim=-1))
    assert torch.equal(A_cos.argmax(dim=-1), torch.arange(X.shape[0], device=X.device))
    assert int(A[0].argmax()) == 1  # with dot products cat gives dog the most
    # the two lines the block prints: each token's most-weighted token
    assert exercises["top"] == A.argmax(dim=-1).tolist() == [1, 1, 2]
    assert exercises["top_cos"] == list(range(X.shape[0]))
    # cosines in [-1, 1]: flatter weights
    assert bool((A_cos.amax(dim=-1) < A.amax(dim=-1)).all())


@pytest.mark.parametrize("shape", [(7, 5), (2, 7, 5)], ids=["unbatched", "batched"])
def test_attention_without_parameters_is_permutation_equivariant(shape, device, dtype):
    # exercise 5: reordering the tokens reorders the output rows the same way, and nothing else
    g = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=g, dtype=dtype).to(device)
    perm = torch.randperm(shape[-2], generator=g).to(device)
    out = self_attention_without_parameters(x)
    assert_close(self_attention_without_parameters(x[..., perm, :]), out[..., perm, :])
    xp = x[..., perm, :]
    assert_close(F.scaled_dot_product_attention(xp, xp, xp, scale=1.0), out[..., perm, :])


def test_the_word_order_block_reorders_z_exactly_like_its_input(exercises):
    X, Z, order = exercises["X"], exercises["Z"], exercises["order"]
    assert_close(exercises["attend"](X[order]), Z[order])
    assert_close(Z, F.scaled_dot_product_attention(X, X, X, scale=1.0))
