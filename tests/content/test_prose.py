"""The English lessons read as lessons (tests/content/prose.py measures the built pages): short
sentences, and no talk about the site's own tests, build or records in the body text (that belongs
on the Verification page, in at most one "How we know" note per chapter)."""

import re

import pytest

from qkvsite import config
from tests.content.prose import (
    LESSONS,
    LONG,
    article_words,
    page_sentences,
    talks_about_proof,
    words,
)


@pytest.mark.site
def test_english_sentences_average_at_most_21_words_and_at_most_8_percent_run_past_35(site):
    lengths = [words(s) for page in LESSONS for s in page_sentences(site, page)]
    assert sum(lengths) / len(lengths) <= 21
    assert sum(n > LONG for n in lengths) / len(lengths) <= 0.08


@pytest.mark.site
@pytest.mark.parametrize("page", LESSONS)
def test_no_lesson_page_averages_more_than_21_words_a_sentence(site, page):
    lengths = [words(s) for s in page_sentences(site, page)]
    assert sum(lengths) / len(lengths) <= 21, page


@pytest.mark.site
def test_no_body_sentence_of_the_lessons_talks_about_the_proof(site):
    found = [
        f"{page}: {s}"
        for page in LESSONS
        for s in page_sentences(site, page)
        if talks_about_proof(s)
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "sentence, proof",
    [
        ("The tests assert that the fitted slope is close to 2.", True),
        ("The site's tests run this page's blocks a second time.", True),
        ("On the CPU in torch 2.13 we observed no call.", True),
        ("So when you test shapes, give L and d_k different values.", False),
        ("The model is scored on the test set after every 10 steps.", False),
    ],
)
def test_proof_talk_is_told_from_the_readers_own_testing(sentence, proof):
    assert talks_about_proof(sentence) == proof


def test_a_sentence_ends_at_its_full_stop_but_not_at_an_abbreviation():
    from tests.content.prose import sentences

    assert sentences("Use e.g. a mask. Then softmax it. See Fig. 3 for more.") == [
        "Use e.g. a mask.",
        "Then softmax it.",
        "See Fig. 3 for more.",
    ]


# --- pace: how much a chapter asks a reader to read ---

# every chapter at most 3,500 words of what a reader reads (code, outputs, formulas and figures
# aside; folded boxes counted), chapter 3 at most 3,000
MOST_WORDS = {"scaled-dot-product": 3000}


@pytest.mark.site
@pytest.mark.parametrize("chapter", config.chapters())
def test_a_chapter_asks_at_most_3500_words_of_reading_and_chapter_3_at_most_3000(site, chapter):
    for prefix in ("en/",):  # the Chinese edition follows the English one's structure
        html = (site / f"{prefix}{chapter}" / "index.html").read_text(encoding="utf-8")
        assert article_words(html) <= MOST_WORDS.get(chapter, 3500), chapter


def test_the_word_count_leaves_out_code_outputs_formulas_and_figures_but_not_folded_boxes():
    html = (
        "<article><h1>T</h1><p>One two <code>x</code> <span class='arithmatex'>d</span>.</p>"
        "<div class='highlight'><pre>print(1)</pre></div><figure><img alt='a b c'>"
        "<figcaption>Four five</figcaption></figure><details><summary>Six</summary>"
        "<p>seven eight</p></details></article>"
    )
    assert article_words(html) == 6  # T, One, two, Six, seven, eight


# --- real numbers: an output shows a number, not a verdict about one ---

VERDICT = re.compile(r"(?:[<>]=?|≤|≥|==)\s*[-+]?\d[\d.eE+-]*\)?\s*[:=]\s*(?:True|False)\b")


def lesson_outputs() -> list[tuple[str, str]]:
    from qkvsite.dialect import Page

    found = []
    for page in config.source_pages():
        if config.page_name(page) in config.chapters():
            for block in Page(page).blocks:
                if block.output is not None:
                    found.append((block.where, block.expected_output))
    return found


def test_no_lesson_output_is_a_boolean_verdict_about_a_number():
    verdicts = [
        f"{where}: {line}"
        for where, text in lesson_outputs()
        for line in text.splitlines()
        if VERDICT.search(line)
    ]
    assert verdicts == []


@pytest.mark.parametrize(
    "line, verdict",
    [
        ("last loss < 0.01: True", True),
        ("accuracy > 0.99: True", True),
        ("max difference <= 1e-6: True", True),
        ("final loss 0.0031", False),
        ("same as PyTorch: True", False),
    ],
)
def test_a_verdict_is_a_comparison_with_a_number_answered_true_or_false(line, verdict):
    assert bool(VERDICT.search(line)) is verdict
