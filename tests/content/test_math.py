"""Formulas: LaTeX in the pages, MathML in the HTML (qkvsite.hooks.math), readable TOC labels and
anchors."""

import functools
import json
import re
from html import unescape

import pytest
from pymdownx.slugs import slugify

from qkvsite import config
from qkvsite.dialect import Page
from qkvsite.hooks.math import plain, plain_html, typeset

PAGES = config.source_pages()
SLUGIFY = slugify(case="lower")  # mkdocs.yml's toc slugify
ATTRIBUTED = re.compile(r'^#{2,6} (.*?) \{ ?#([\w-]+) data-toc-label="([^"]+)" ?\}$', re.M)


def test_inline_and_display_formulas_become_mathml():
    content = (
        '<p>scale <span class="arithmatex">\\(\\sqrt{d_k}\\)</span> and <span '
        'class="arithmatex">\\(a &lt; b\\)</span></p><div class="arithmatex">\\[\n\\frac{Q '
        "K^\\top}{\\sqrt{d_k}}\n\\]</div>"
    )
    html = typeset(content)
    assert "arithmatex" not in html and "\\(" not in html
    assert html.count('display="inline"') == 2 and html.count('display="block"') == 1
    # a < b, escaped
    assert "<msqrt>" in html and "<mfrac>" in html and "<mo>&#x0003C;</mo>" in html


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
    # the home page lists the chapters with their descriptions
    if config.page_name(page) == "index":
        lang = config.language_of(page)
        text += "".join(
            Page(config.DOCS / f"{c}.{lang}.md").meta["description"] for c in config.chapters()
        )
    formulas = len(re.findall(r"\$\$.+?\$\$|\$[^$\n]+\$", text, re.S))
    assert body.count("<math ") == formulas


def test_the_search_index_holds_text_not_mathml(site):
    for lang in config.languages():
        index = (site / config.url_prefix(lang) / "search" / "search_index.json").read_text(
            encoding="utf-8"
        )
        assert "<math" not in index and "arithmatex" not in index and "\\\\(" not in index


# --- plain text where MathML cannot go ---


@pytest.mark.parametrize(
    "tex, text",
    [
        (r"$\operatorname{softmax}(Q K^\top / \sqrt{d_k})\, V$", "softmax(Q Kᵀ / √dₖ) V"),
        (r"$d_{\text{model}} \times d_k$", "d_model × dₖ"),
        (r"$W_i^O$ and $\sum_j A[i, j] \cdot V[j]$", "Wᵢᴼ and Σⱼ A[i, j] · V[j]"),
        (r"$L \neq S$, $m - n = \pm 3$, $\exp(-\infty) = 0$", "L ≠ S, m − n = ± 3, exp(−∞) = 0"),
    ],
)
def test_a_formula_reads_as_plain_text_where_no_mathml_goes(tex, text):
    assert plain(tex) == text
    html = typeset(re.sub(r"\$([^$]+)\$", r'<span class="arithmatex">\\(\1\\)</span>', tex))
    assert plain_html(html) == text.replace("<", "&lt;")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_a_heading_label_reads_its_formula_and_keeps_the_anchor_its_text_gave_it(page):
    """The label is the heading in plain text (X Xᵀ, √d_k); the anchor is the slug of that text, the
    one the heading had before it held a formula (other pages link to it), unless it is an explicit
    anchor both editions share."""
    lang = config.language_of(page)
    other = next(
        config.DOCS / f"{config.page_name(page)}.{o}.md" for o in config.languages() if o != lang
    )
    shared = re.findall(r"\{ ?#([\w-]+)", other.read_text(encoding="utf-8"))
    for text, anchor, label in ATTRIBUTED.findall(Page(page).body):
        straight = lambda s: s.replace("“", '"').replace("”", '"')  # noqa: E731 (a label may use either quotes)
        text = plain(text).replace("`", "")
        # a script Unicode lacks (W^Q, L_q) stays TeX in plain text: such a label says it in words
        assert straight(text) == straight(label) or (
            TEX_LEFT.search(text) and not TEX_LEFT.search(label)
        ), text
        assert anchor == SLUGIFY(as_written_before(text), "-") or anchor in shared, (anchor, label)


TEX_LEFT = re.compile(r"\b\w[_^]\w\b")  # d_k, W^O; not a name such as d_model or is_causal
SCRIPTS = str.maketrans("ₖᵢⱼᴼᴷⱽ", "kijOKV")


def as_written_before(text: str) -> str:
    """A label as the pages wrote it before formulas had Unicode scripts: its anchor was made from
    this text."""
    return re.sub(r"(\w)([ₖᵢⱼ])", r"\1_\2", re.sub(r"(\w)([ᴼᴷⱽ])", r"\1^\2", text)).translate(
        SCRIPTS
    )


@pytest.mark.parametrize("lang", config.languages())
def test_tables_of_contents_titles_and_search_results_hold_no_tex(site, lang):
    titles = []
    for page in (site / config.url_prefix(lang)).rglob("index.html"):
        text = page.read_text(encoding="utf-8")
        titles += re.findall(r"<title>(.*?)</title>", text) + re.findall(
            r'md-ellipsis">\s*(.*?)\s*</span>', text, re.S
        )
    index = json.loads(
        (site / config.url_prefix(lang) / "search" / "search_index.json").read_text(
            encoding="utf-8"
        )
    )
    titles += [doc["title"] for doc in index["docs"]]
    # a heading's code span (`d_k ** 0.5`) is Python, not TeX; a table of contents shows it without
    # <code>
    code = {
        span
        for page in PAGES
        for span in re.findall(r"^#.*?`([^`]+)`", page.read_text(encoding="utf-8"), re.M)
    }
    titles = [re.sub(r"<[^>]+>", "", re.sub(r"<code>.*?</code>", "", title)) for title in titles]
    titles = [
        functools.reduce(lambda title, span: title.replace(span, ""), code, title)
        for title in titles
    ]
    assert len(titles) > 300
    assert not [
        title for title in titles if TEX_LEFT.search(title) or "\\" in title or "$" in title
    ]


# --- what readers see: no raw formula left ---

FRAGMENT = re.compile(r"\w_\w|\w\^\w|[√ᵀΣ]")


def prose(html: str) -> str:
    """The text of a page's content as it reads: without code (and code blocks' titles), formulas
    (MathML), scripts, styles, tags and their attributes (alt text cannot hold MathML and is
    plain text on purpose)."""
    body = html[html.index('<div class="md-content"') :]
    body = re.sub(r"<(code|pre|math|script|style)\b.*?</\1>", " ", body, flags=re.S)
    body = re.sub(r'<span class="filename">.*?</span>', " ", body, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", body))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_raw_formula_fragment_is_left_in_the_prose(site, page):
    url = config.page_url(config.page_name(page), config.language_of(page))
    text = prose((site / url / "index.html").read_text(encoding="utf-8"))
    left = [text[max(0, m.start() - 30) : m.end() + 30] for m in FRAGMENT.finditer(text)]
    assert not left, f"write these as $...$ (or a Python name as a code span): {left}"


@pytest.mark.parametrize("lang", config.languages())
@pytest.mark.parametrize("chapter", config.chapters())
def test_a_notebook_keeps_its_formulas_as_tex_and_its_page_typesets_them(site, chapter, lang):
    notebook = json.loads(
        (config.DOCS / "notebooks" / f"{chapter}.{lang}.ipynb").read_text(encoding="utf-8")
    )
    markdown = "".join(
        "".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown"
    )
    assert re.search(r"\$[^$\n]+\$", markdown) and "data-toc-label" not in markdown
    notebook_page = (
        site / config.url_prefix(lang) / "notebooks" / chapter / "index.html"
    ).read_text(encoding="utf-8")
    chapter_page = (site / config.page_url(chapter, lang) / "index.html").read_text(
        encoding="utf-8"
    )
    assert notebook_page.count("<math ") == chapter_page.count("<math ") > 0
    cells = "".join(re.findall(r'data-mime-type="text/markdown">(.*?)</div>', notebook_page, re.S))
    assert "$" not in re.sub(r"<(code|pre|math)\b.*?</\1>", "", cells, flags=re.S)
    toc = notebook_page[notebook_page.index('class="md-nav md-nav--secondary"') :]
    assert "$" not in toc[: toc.index("</nav>")]


def test_link_previews_and_search_results_read_formulas_as_text(site):
    page = (site / "en" / "scaled-dot-product" / "index.html").read_text(encoding="utf-8")
    (description,) = re.findall(r'<meta name="description" content="([^"]*)"', page)
    assert "√dₖ" in unescape(description) and "$" not in description
    index = json.loads((site / "en" / "search" / "search_index.json").read_text(encoding="utf-8"))
    titles = [doc["title"] for doc in index["docs"]]
    assert "3.3 Step 2: divide by √dₖ" in titles


# --- figures: mathtext ---


def drawn(label: str, **rc) -> bytes:
    """The SVG of a small figure with one label, drawn as the site draws figures."""
    import matplotlib.pyplot as plt

    from qkvsite.figures import render_svg
    from qkvsite.fonts import setup_fonts

    setup_fonts()
    with plt.rc_context(rc):
        fig = plt.figure(figsize=(3, 1))
        fig.text(0.1, 0.5, label)
        return render_svg(fig)


def test_figure_formulas_are_set_in_fonts_the_browser_has():
    from qkvsite.figures import check_fonts

    label = "$S = Q K^\\top / \\sqrt{d_k}$：分数"
    assert b"DejaVu Sans" in check_fonts(drawn(label), "test")
    with pytest.raises(
        ValueError, match="STIXSizeOneSym"
    ):  # matplotlib's default draws the radical from STIX
        check_fonts(
            drawn(label, **{"mathtext.fontset": "dejavusans", "mathtext.fallback": "cm"}), "test"
        )


def test_figures_are_laid_out_by_the_svg_backend_even_after_a_link_preview_card():
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    from qkvsite import figures
    from qkvsite.cards import draw_card

    canvases = []

    def one_label(ns, lang):
        fig = figures.plt.figure(figsize=(2, 1))
        fig.text(0.1, 0.5, "Q K V")
        canvases.append(type(fig.canvas))
        return fig

    figures.FIGURES["canvas-test"] = figures.Figure(
        "canvas-test", "dot_product/two_vectors.py", one_label
    )
    try:
        first = figures.draw_one("canvas-test", "en")
        assert draw_card("A title", "qkv", "en").startswith(b"\x89PNG")  # a PNG, drawn by Agg
        assert figures.draw_one("canvas-test", "en") == first
    finally:
        del figures.FIGURES["canvas-test"]
    assert canvases == [FigureCanvasSVG, FigureCanvasSVG]


@pytest.mark.parametrize("tex", [r"\sin a \cos b", r"-\ln p(y)", r"\cos\theta", r"\max_j s_j"])
def test_a_function_name_is_applied_to_its_argument_with_a_thin_space(tex):
    html = typeset(f'<span class="arithmatex">\\({tex}\\)</span>')
    # MathML's function application (U+2061) after the name, spaced as TeX spaces \sin a: never
    # "sina"
    assert re.search(r'(</mi>|</msub>)<mo lspace="0" rspace="0.1667em">&#x2061;</mo><m', html), html


def test_a_function_name_before_parentheses_gets_no_extra_space():
    assert "&#x2061;" not in typeset(
        '<span class="arithmatex">\\(\\operatorname{softmax}(x) + \\exp(y)\\)</span>'
    )
