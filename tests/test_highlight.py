"""Lighter code highlighting (qkvsite.highlight): fewer elements, the same text, the colours that carry meaning."""

import re
from pathlib import Path

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from qkvsite.highlight import Lighter
from tests.conftest import ROOT

SNIPPETS = sorted((ROOT / "snippets").rglob("*.py"))
# classes the lighter highlighting shows as plain code: names (Material shows them so), whitespace (no colour),
# operators and punctuation (Material greys them)
PLAIN = {"n", "w", "o", "p"}


def tokens(html: str) -> list[tuple[str, str]]:
    """(class, text) of every coloured span, plain classes and whitespace dropped."""
    spans = re.findall(r'<span class="(\w+)">([^<]*)</span>', html)
    return [(cls, text.strip()) for cls, text in spans if cls not in PLAIN and text.strip()]


def render(source: str, **options) -> str:
    return highlight(source, get_lexer_by_name("python", **options), HtmlFormatter())


def test_lighter_highlighting_keeps_the_text_and_every_other_characters_colour():
    for path in SNIPPETS:
        source = path.read_text(encoding="utf-8")
        full, light = render(source), render(source, filters=[Lighter()])
        text = lambda html: re.sub(r"<[^>]+>", "", html)  # noqa: E731
        assert text(light) == text(full), path
        # every character outside names, operators and punctuation keeps its colour class
        colours = lambda html: [(c, ch) for c, t in tokens(html) for ch in t.replace(" ", "")]  # noqa: E731
        assert colours(light) == colours(full), path


def test_lighter_highlighting_drops_half_of_the_elements_or_more():
    full = sum(render(p.read_text(encoding="utf-8")).count("<span") for p in SNIPPETS)
    light = sum(render(p.read_text(encoding="utf-8"), filters=[Lighter()]).count("<span") for p in SNIPPETS)
    assert light <= 0.5 * full, (light, full)


def test_the_built_pages_use_the_lighter_highlighting(site):
    page = (Path(site) / "scaled-dot-product" / "index.html").read_text(encoding="utf-8")
    assert not re.search(r'<span class="[nop]">', page)
    assert '<span class="k">' in page  # still highlighted


def test_the_notebook_pages_code_cells_keep_their_code(site):
    # nbconvert highlights them (mkdocs-jupyter offers no way to hand Pygments a filter); the stylesheet colours the
    # same token classes as on the chapter pages, so names, operators and punctuation stay plain text there too
    import html

    import nbformat

    from qkvsite import config
    from qkvsite.notebooks import GENERATED, Edition

    for lang in config.languages():
        built = Path(site) / config.url_prefix(lang) / "notebooks" / "scaled-dot-product" / "index.html"
        page = built.read_text(encoding="utf-8")
        cells = re.findall(r'<div class="highlight-ipynb[^"]*"><pre>(.*?)</pre>', page, re.S)
        notebook = nbformat.read(GENERATED / Edition("scaled-dot-product", lang).page, as_version=4)
        code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
        assert [html.unescape(re.sub(r"<[^>]+>", "", cell)).strip("\n") for cell in cells] == code
        assert '<span class="k">' in page
