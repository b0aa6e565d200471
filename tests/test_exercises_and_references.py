"""Every chapter ends with exercises (answers collapsed, coded ones from snippets), then references.

The FAQ ends with references too.
"""

import re

import pytest

from qkvsite import config
from qkvsite.config import DOCS

ANSWER = {"zh": '??? success "答案"', "en": '??? success "Answer"'}
HEADINGS = {
    lang: {
        "exercises": "## " + config.EXERCISES_HEADING[lang],
        "references": "## " + config.REFERENCES_HEADING[lang],
        "answer": ANSWER[lang],
    }
    for lang in config.languages()
}
D2L = {"zh": "https://zh.d2l.ai/", "en": "https://d2l.ai/"}
EVERY_REFERENCE_LIST = [
    "https://arxiv.org/abs/1706.03762",  # the paper
    "https://docs.pytorch.org/docs/stable/",  # the documentation of the functions used
    "https://nlp.seas.harvard.edu/annotated-transformer/",
    "https://zhuanlan.zhihu.com/p/414084879",  # the source article, credited
]
CHAPTERS = config.chapters()
LANGS = config.languages()


def sections(name, lang):
    """The page's level-2 sections, in order: {heading: body}."""
    md = (DOCS / f"{name}.{lang}.md").read_text(encoding="utf-8")
    parts = re.split(r"^(## .*)$", md, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_ends_with_exercises_then_references(name, lang):
    h = HEADINGS[lang]
    assert list(sections(name, lang))[-2:] == [h["exercises"], h["references"]]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_has_three_to_five_exercises_each_with_a_collapsed_answer(name, lang):
    body = sections(name, lang)[HEADINGS[lang]["exercises"]]
    numbers = [int(n) for n in re.findall(r"^\*\*(\d+)\.", body, re.M)]
    assert 3 <= len(numbers) <= 5 and numbers == list(range(1, len(numbers) + 1))
    assert body.count(HEADINGS[lang]["answer"]) == len(numbers), "one collapsed answer per exercise"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_every_coded_answer_is_a_tested_snippet_section(name, lang):
    body = sections(name, lang)[HEADINGS[lang]["exercises"]]
    fences = re.findall(r"^\s*```python\n(.*?)^\s*```", body, re.M | re.S)
    assert fences, "at least one exercise is solved in code"
    for code in fences:
        assert re.fullmatch(r'\s*--8<-- "snippets/[\w/]+\.py:\w+"\s*', code), f"not a snippet section: {code!r}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", [*CHAPTERS, "faq"])
def test_references_cite_the_paper_the_pytorch_docs_d2l_the_annotated_transformer_and_the_source(name, lang):
    body = sections(name, lang)[HEADINGS[lang]["references"]]
    links = re.findall(r"\]\((\S+?)\)", body)
    for expected in [*EVERY_REFERENCE_LIST, D2L[lang]]:
        assert any(link.startswith(expected) for link in links), f"{name}.{lang}.md references lack {expected}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", [*CHAPTERS, "faq"])
def test_references_are_plain_links_to_https_pages(name, lang):
    body = sections(name, lang)[HEADINGS[lang]["references"]]
    assert "![" not in body and "<script" not in body and "<iframe" not in body, "nothing is loaded from a reference"
    assert all(link.startswith("https://") for link in re.findall(r"\]\((\S+?)\)", body))
