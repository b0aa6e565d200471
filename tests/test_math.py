"""Formulas: LaTeX in the pages, MathML in the HTML (qkvsite.hooks.math), readable TOC labels and anchors."""

import re

import pytest

from qkvsite import config
from qkvsite.dialect import Page
from qkvsite.hooks.math import typeset

PAGES = config.source_pages()


def test_inline_and_display_formulas_become_mathml():
    content = (
        '<p>scale <span class="arithmatex">\\(\\sqrt{d_k}\\)</span>'
        ' and <span class="arithmatex">\\(a &lt; b\\)</span></p>'
        '<div class="arithmatex">\\[\n\\frac{Q K^\\top}{\\sqrt{d_k}}\n\\]</div>'
    )
    html = typeset(content)
    assert "arithmatex" not in html and "\\(" not in html
    assert html.count('display="inline"') == 2 and html.count('display="block"') == 1
    assert "<msqrt>" in html and "<mfrac>" in html and "<mo>&#x0003C;</mo>" in html  # a < b, escaped


def test_a_formula_that_cannot_be_typeset_fails_the_build_and_names_it():
    with pytest.raises(ValueError, match=r"cannot typeset \$x\^\$"):
        typeset('<span class="arithmatex">\\(x^\\)</span>')


HEADING = re.compile(r"^#{2,6} .*\$.*$", re.M)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_a_heading_with_a_formula_has_a_stable_anchor_and_a_readable_toc_label(page):
    for heading in HEADING.findall(Page(page).body):
        assert re.search(r'\{ *#[\w-]+ [^}]*data-toc-label="[^"$\\]+"[^}]*\}$', heading), heading


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_formula_of_a_page_is_typeset(site, page):
    url = config.page_url(config.page_name(page), config.language_of(page))
    html = (site / url / "index.html").read_text(encoding="utf-8")
    body = html[html.index('<div class="md-content"') :]
    assert "arithmatex" not in body and "\\(" not in body and "\\[" not in body
    text = re.sub(r"```.*?```", "", Page(page).body, flags=re.S)
    if config.page_name(page) == "index":  # the home page lists the chapters with their descriptions
        lang = config.language_of(page)
        text += "".join(Page(config.DOCS / f"{c}.{lang}.md").meta["description"] for c in config.chapters())
    formulas = len(re.findall(r"\$\$.+?\$\$|\$[^$\n]+\$", text, re.S))
    assert body.count("<math ") == formulas


def test_the_search_index_holds_text_not_mathml(site):
    for lang in config.languages():
        index = (site / config.url_prefix(lang) / "search" / "search_index.json").read_text(encoding="utf-8")
        assert "<math" not in index and "arithmatex" not in index and "\\\\(" not in index
