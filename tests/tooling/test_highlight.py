"""Lighter code highlighting (qkvsite.highlight): fewer elements, the same text, the colours that
carry meaning."""

import re
from pathlib import Path

import pytest
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from qkvsite.highlight import Lighter, PageLexer, python_tokens
from tests.conftest import ROOT

SNIPPETS = sorted((ROOT / "snippets").rglob("*.py"))
# classes the lighter highlighting shows as plain code: names (Material shows them so), whitespace
# (no colour), operators and punctuation (Material greys them)
PLAIN = {"n", "w", "o", "p"}


def tokens(html: str) -> list[tuple[str, str]]:
    """(class, text) of every coloured span, plain classes and whitespace dropped."""
    spans = re.findall(r'<span class="(\w+)">([^<]*)</span>', html)
    return [(cls, text.strip()) for cls, text in spans if cls not in PLAIN and text.strip()]


def render(source: str, lexer: str = "python") -> str:
    return highlight(source, get_lexer_by_name(lexer), HtmlFormatter())


def test_lighter_highlighting_keeps_the_text_and_every_other_characters_colour():
    for path in SNIPPETS:
        source = path.read_text(encoding="utf-8")
        full, light = render(source), render(source, "qkv-python")
        text = lambda html: re.sub(r"<[^>]+>", "", html)  # noqa: E731
        assert text(light) == text(full), path
        # every character outside names, operators and punctuation keeps its colour class
        colours = lambda html: [(c, ch) for c, t in tokens(html) for ch in t.replace(" ", "")]  # noqa: E731
        assert colours(light) == colours(full), path


def test_lighter_highlighting_drops_half_of_the_elements_or_more():
    full = sum(render(p.read_text(encoding="utf-8")).count("<span") for p in SNIPPETS)
    light = sum(
        render(p.read_text(encoding="utf-8"), "qkv-python").count("<span") for p in SNIPPETS
    )
    assert light <= 0.5 * full, (light, full)


def test_python_fences_find_the_page_lexer_through_its_entry_point():
    lexer = get_lexer_by_name("qkv-python")  # the name mkdocs.yml gives pymdownx.highlight
    assert type(lexer) is PageLexer, (
        "reinstall the project (pip install --no-deps -e .): pyproject.toml registers it"
    )
    assert any(isinstance(f, Lighter) for f in lexer.filters)


def test_a_build_without_the_lexers_entry_point_stops_with_what_to_do(monkeypatch):
    import pygments.util

    from qkvsite import highlight

    def missing(name, **options):
        raise pygments.util.ClassNotFound(name)

    # as in a clone installed before the entry point
    monkeypatch.setattr(highlight, "get_lexer_by_name", missing)
    with pytest.raises(RuntimeError, match=r"pip install --no-deps -e \."):
        highlight.require_page_lexer()


def test_a_block_is_lexed_once_and_highlighted_alike_every_time():
    source = (ROOT / "snippets" / "scaled_dot_product" / "attention.py").read_text(encoding="utf-8")
    python_tokens.cache_clear()
    first, second = render(source, "qkv-python"), render(source, "qkv-python")
    assert python_tokens.cache_info().misses == 1 and python_tokens.cache_info().hits == 1
    assert (
        first
        == second
        == highlight(source, get_lexer_by_name("python", filters=[Lighter()]), HtmlFormatter())
    )


def test_the_built_pages_use_the_lighter_highlighting(site):
    page = (Path(site) / "scaled-dot-product" / "index.html").read_text(encoding="utf-8")
    assert not re.search(r'<span class="[nop]">', page)
    assert '<span class="k">' in page  # still highlighted


def test_the_notebook_pages_code_cells_keep_their_code_in_the_lighter_highlighting(site):
    # nbconvert highlights them with the lexer the notebook template names (qkv-python), as on the
    # chapter pages
    import html

    import nbformat

    from qkvsite import config
    from qkvsite.notebook_runs import Edition, generated

    for lang in config.languages():
        built = (
            Path(site) / config.url_prefix(lang) / "notebooks" / "scaled-dot-product" / "index.html"
        )
        page = built.read_text(encoding="utf-8")
        cells = re.findall(r'<div class="highlight-ipynb[^"]*"><pre>(.*?)</pre>', page, re.S)
        edition = Edition("scaled-dot-product", lang)
        notebook = nbformat.read(generated() / edition.page, as_version=4)
        code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
        assert [html.unescape(re.sub(r"<[^>]+>", "", cell)).strip("\n") for cell in cells] == code
        assert not any(re.search(r'<span class="[nop]">', cell) for cell in cells)
        # still coloured
        assert all('<span class="kn">import </span>' in cell for cell in cells if "import " in cell)
