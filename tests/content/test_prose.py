"""The English lessons read as lessons (tests/content/prose.py measures the built pages): short
sentences, and no talk about the site's own tests, build or records in the body text (that belongs
on the Verification page, in at most one "How we know" note per chapter)."""

import pytest

from tests.content.prose import LESSONS, LONG, page_sentences, talks_about_proof, words


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
def test_at_most_10_body_sentences_of_the_lessons_talk_about_the_proof(site):
    found = [
        f"{page}: {s}"
        for page in LESSONS
        for s in page_sentences(site, page)
        if talks_about_proof(s)
    ]
    assert len(found) <= 10, "\n".join(found)


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
