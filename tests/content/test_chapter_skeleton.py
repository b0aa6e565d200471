"""Every chapter page, in both editions, has the skeleton CONTRIBUTING.md gives it ("Add a chapter",
step 1).

Front matter with a one-line ``description``; a first heading ``# N. Title``, N the chapter's place
in the chapter list; an ``!!! abstract`` before the first section; sections; and at the end, in this
order, the summary, the exercises (3 to 5, each answer collapsed, at least one in code from the
snippets) and the references (plain links). The FAQ ends with references too.
"""

import re

import pytest
import yaml

from qkvsite import config
from qkvsite.config import DOCS
from qkvsite.dialect import FRONT_MATTER, Page

ANSWER = {"zh": '??? success "答案"', "en": '??? success "Answer"'}
HEADINGS = {
    lang: {
        "summary": "## " + config.SUMMARY_HEADING[lang],
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

# `!!! abstract` or `!!! abstract "title"`, then (after blank lines) its indented content
ABSTRACT = re.compile(r'^!!! abstract(?: "[^"\n]*")?[ \t]*\n(?:[ \t]*\n)*(?: {4}|\t)\S', re.M)


def text(name, lang):
    return (DOCS / f"{name}.{lang}.md").read_text(encoding="utf-8")


def sections(name, lang) -> list[tuple[str, str]]:
    """The page's level-2 sections, in order: (heading line, body), repeated headings kept."""
    parts = re.split(r"^(## .*)$", text(name, lang), flags=re.M)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def section(name, lang, heading) -> str:
    """The body of the one section headed ``heading``."""
    bodies = [body for line, body in sections(name, lang) if line == heading]
    assert len(bodies) == 1, f"{name}.{lang}.md has {len(bodies)} sections {heading!r}"
    return bodies[0]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_has_a_description_on_one_line_of_its_front_matter(name, lang):
    page = Page(DOCS / f"{name}.{lang}.md")
    front = FRONT_MATTER.match(page.text)
    assert front, f"{name}.{lang}.md does not start with front matter (---)"
    description = page.meta.get("description")
    assert isinstance(description, str) and description.strip(), (
        f"{name}.{lang}.md has no description"
    )
    lines = [line for line in front[1].splitlines() if line.startswith("description:")]
    assert len(lines) == 1, f"{name}.{lang}.md: {len(lines)} description lines"
    # read alone, its line gives the whole description: no block scalar, no continuation on the next
    # lines
    assert yaml.safe_load(lines[0])["description"] == description, (
        f"{name}.{lang}.md: description spans lines"
    )


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapters_first_heading_is_its_title_numbered_by_its_place_in_the_chapter_list(
    name, lang
):
    number = CHAPTERS.index(name) + 1
    first = re.search(r"^#{1,6} .*$", Page(DOCS / f"{name}.{lang}.md").body, re.M)
    assert first, f"{name}.{lang}.md has no heading"
    assert re.fullmatch(rf"# {number}\. \S.*", first[0]), (
        f"{name}.{lang}.md: {first[0]!r}, expected '# {number}. …'"
    )


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_opens_with_an_abstract_before_its_first_section(name, lang):
    before_sections = re.split(r"^## ", text(name, lang), maxsplit=1, flags=re.M)[0]
    assert ABSTRACT.search(before_sections), (
        f"{name}.{lang}.md has no `!!! abstract` before its first ## section"
    )


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_ends_with_summary_then_exercises_then_references_after_its_own_sections(
    name, lang
):
    h = HEADINGS[lang]
    headings = [line for line, _ in sections(name, lang)]
    assert headings[-3:] == [h["summary"], h["exercises"], h["references"]], (
        f"{name}.{lang}.md ends {headings[-3:]}"
    )
    assert len(headings) > 3, f"{name}.{lang}.md has no sections of its own before the summary"
    for heading in (h["summary"], h["exercises"], h["references"]):
        assert headings.count(heading) == 1, f"{name}.{lang}.md repeats {heading!r}"
    assert section(name, lang, h["summary"]).strip(), f"{name}.{lang}.md: the summary is empty"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_has_three_to_five_exercises_each_with_a_collapsed_answer(name, lang):
    body = section(name, lang, HEADINGS[lang]["exercises"])
    numbers = [int(n) for n in re.findall(r"^\*\*(\d+)\.", body, re.M)]
    assert 3 <= len(numbers) <= 5 and numbers == list(range(1, len(numbers) + 1))
    assert body.count(HEADINGS[lang]["answer"]) == len(numbers), "one collapsed answer per exercise"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_every_coded_answer_is_a_tested_snippet_section(name, lang):
    body = section(name, lang, HEADINGS[lang]["exercises"])
    fences = re.findall(r"^\s*```python\n(.*?)^\s*```", body, re.M | re.S)
    assert fences, "at least one exercise is solved in code"
    for code in fences:
        assert re.fullmatch(r'\s*--8<-- "snippets/[\w/]+\.py:\w+"\s*', code), (
            f"not a snippet section: {code!r}"
        )


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", [*CHAPTERS, "faq"])
def test_references_cite_the_paper_the_pytorch_docs_d2l_the_annotated_transformer_and_the_source(
    name, lang
):
    body = section(name, lang, HEADINGS[lang]["references"])
    links = re.findall(r"\]\((\S+?)\)", body)
    for expected in [*EVERY_REFERENCE_LIST, D2L[lang]]:
        assert any(link.startswith(expected) for link in links), (
            f"{name}.{lang}.md references lack {expected}"
        )


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", [*CHAPTERS, "faq"])
def test_references_are_plain_links_to_https_pages(name, lang):
    body = section(name, lang, HEADINGS[lang]["references"])
    assert "![" not in body and "<script" not in body and "<iframe" not in body, (
        "nothing is loaded from a reference"
    )
    assert all(link.startswith("https://") for link in re.findall(r"\]\((\S+?)\)", body))


QUESTION = {"zh": "**本章回答的问题：**", "en": "**The question:**"}
HOW_WE_KNOW = {"zh": '!!! note "结果怎么核对"', "en": '!!! note "How we know"'}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_states_its_question_before_its_first_code_block_and_first_section(name, lang):
    before = re.split(r"^(?:## |\s*```python)", text(name, lang), maxsplit=1, flags=re.M)[0]
    assert QUESTION[lang] in before, f"{name}.{lang}.md does not open with {QUESTION[lang]}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_has_at_most_one_how_we_know_note_linking_the_verification_page(name, lang):
    notes = re.findall(re.escape(HOW_WE_KNOW[lang]) + r"\n((?:(?: {4}.*)?\n)+)", text(name, lang))
    assert len(notes) <= 1, f"{name}.{lang}.md has {len(notes)} How-we-know notes"
    assert all("verification.md" in note for note in notes), (
        f"{name}.{lang}.md: the note links no Verification page"
    )
