"""Formulas typeset as MathML at build time: no math JavaScript in the browser.

Authors write LaTeX, ``$...$`` inline and ``$$...$$`` on lines of their own (pymdownx.arithmatex,
generic mode, keeps the TeX); latex2mathml converts each formula to MathML, which browsers render
natively. Two steps: when a page's HTML is made (``on_page_content``), each formula becomes its
plain text with its TeX beside it (``plain_formulas``), what Material's search indexes
(``on_page_context``, priority 0) and the description reads; then (``typeset_page``,
``on_page_context`` after the search plugin) each becomes MathML. A heading with a formula gives
itself a readable TOC label and a stable anchor, ``## $X X^\\top$ ... { #anchor data-toc-label="X
Xᵀ
..." }`` (tests/content/test_math.py). Notebooks keep the ``$...$`` source: Jupyter and Colab render
it; their pages on this site (mkdocs-jupyter leaves the TeX in the Markdown cells) are typeset
here too. Where only text fits (the search index, a notebook page's table of contents, a
description in ``<meta>``), ``plain_tex`` writes a formula in Unicode: X Xᵀ, √dₖ, Wᴼ; a script
Unicode lacks (W^Q, L_q) is ``<sup>``/``<sub>`` where HTML goes, else as TeX.
"""

import html
import re
from functools import lru_cache

from latex2mathml.converter import convert

from qkvsite.hooks import toc_items

INLINE = re.compile(r'<span class="arithmatex">\\\((.*?)\\\)</span>', re.S)
DISPLAY = re.compile(r'<div class="arithmatex">\\\[(.*?)\\\]</div>', re.S)
PLAIN = re.compile(
    r'<(span|div) class="arithmatex" data-tex="([^"]*)">.*?</\1>([、，。；：！？）》」』]?)', re.S
)
# latex2mathml writes \operatorname{softmax} as an operator, <mo>softmax</mo>, spaced and read as
# one; a function name is an identifier (MathML: <mi>), like the <mi>exp</mi> of \exp
OPERATOR_NAME = re.compile(r"<mo>([A-Za-z]{2,})</mo>")
# a function name (sin, ln, max_j) before its argument: MathML's function application, spaced as
# TeX spaces it
FUNCTION = re.compile(
    r"(<mi>[A-Za-z]{2,}</mi>|<msub><mi>[A-Za-z]{2,}</mi><mi>\w</mi></msub>)(?=<m[inr]|<msub|<msup)"
)
APPLY = '<mo lspace="0" rspace="0.1667em">&#x2061;</mo>'
MATH = re.compile(r"(<math\b[^>]*)>(.*)(</math>)", re.S)
WITH_TEX = re.compile(r'<math\b[^>]*\bdata-tex="([^"]*)"[^>]*>.*?</math>', re.S)
TAG = re.compile(r"<(/?)mrow>")


def _unwrapped(content: str) -> str:
    """The content without an <mrow> around all of it: <math> already groups its children as one
    row."""
    if not (content.startswith("<mrow>") and content.endswith("</mrow>")):
        return content
    depth = 0
    for match in TAG.finditer(content):
        depth += -1 if match[1] else 1
        if depth == 0:
            return content[6:-7] if match.end() == len(content) else content
    return content


@lru_cache(maxsize=4096)
def mathml(tex: str, display: str) -> str:
    """The MathML of one formula. Its TeX rides along in a ``data-tex`` attribute (an attribute, not
    an ``<annotation>``: every element costs the browser style and layout time), so that places that
    need text (the search index, link previews) can write the formula out: ``plain_html``."""
    try:
        converted = convert(tex, display=display)
    except Exception as error:  # latex2mathml raises its own error types for TeX it cannot read
        raise ValueError(f"cannot typeset ${tex}$: {error}") from error
    converted = OPERATOR_NAME.sub(r"<mi>\1</mi>", converted)
    converted = FUNCTION.sub(lambda m: m[1] + APPLY, converted)
    source = html.escape(tex, quote=True)
    return MATH.sub(lambda m: f'{m[1]} data-tex="{source}">{_unwrapped(m[2])}{m[3]}', converted)


def typeset(content: str) -> str:
    """Every formula of a page's HTML (arithmatex's, or ``plain_formulas``') as MathML."""
    content = plain_formulas(content)

    def formula(m: re.Match) -> str:
        typeset = mathml(html.unescape(m[2]), "block" if m[1] == "div" else "inline")
        # Chinese punctuation after an inline formula stays on its line (a line never starts with
        # "、")
        return (
            f'<span class="nowrap">{typeset}{m[3]}</span>'
            if m[3] and m[1] == "span"
            else typeset + m[3]
        )

    return PLAIN.sub(formula, content)


def plain_formulas(content: str) -> str:
    """Every formula of a page's HTML as its plain text, its TeX in a ``data-tex`` attribute."""

    def plain_element(element: str, tex: str) -> str:
        tex = html.unescape(tex).strip()
        text = plain_tex(tex, markup=True)
        return (
            f'<{element} class="arithmatex" '
            f'data-tex="{html.escape(tex, quote=True)}">{text}</{element}>'
        )

    content = DISPLAY.sub(lambda m: plain_element("div", m[1]), content)
    return INLINE.sub(lambda m: plain_element("span", m[1]), content)


# --- notebook pages ---

MARKDOWN_CELL = re.compile(r'(data-mime-type="text/markdown">)(.*?)(</div>)', re.S)
TEX = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)


def typeset_notebook(content: str) -> str:
    """The TeX of a notebook page's Markdown cells (nbconvert leaves ``$...$`` as text) as
    MathML."""

    def cell(match: re.Match) -> str:
        def formula(m: re.Match) -> str:
            tex, display = (m[1], "block") if m[1] is not None else (m[2], "inline")
            return mathml(html.unescape(tex).strip(), display)

        return match[1] + TEX.sub(formula, match[2]) + match[3]

    return MARKDOWN_CELL.sub(cell, content)


# --- plain text ---

NAMES = (
    "cdot times neq ne le leq ge geq approx sum dots ldots cdots to infty pm partial in top "
    "theta omega delta"
)
SYMBOLS = dict(zip(NAMES.split(), "·×≠≠≤≤≥≥≈Σ……⋯→∞±∂∈ᵀθωδ", strict=True))
SYMBOLS.update(quad=" ", left="", right="")  # \exp, \sin, \max...: their names
ARGUMENT = r"\{((?:[^{}]|\{[^{}]*\})*)\}"
WRAPPERS = re.compile(r"\\(?:operatorname|text|texttt|mathrm|mathit|mathbf)" + ARGUMENT)
SQRT = re.compile(r"\\sqrt" + ARGUMENT)
SCRIPT = re.compile(r"([_^])(?:" + ARGUMENT + r"|(\w))")
SCRIPTS = {"_": "0123456789aehijklmnoprstuvx+−=()", "^": "0123456789ABDEGHIJKLMNOPRTUVWin+−=()"}
UNICODE = {"_": "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋₌₍₎", "^": "⁰¹²³⁴⁵⁶⁷⁸⁹ᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂⁱⁿ⁺⁻⁼⁽⁾"}
FRAC = re.compile(r"\\frac" + ARGUMENT + ARGUMENT)


def _script(mark: str, body: str, markup: bool) -> str:
    """A sub- or superscript in Unicode (ₖ, ᴼ); else (a word, d_model; a letter Unicode lacks, W^Q)
    as TeX, or as ``<sub>``/``<sup>`` in ``markup``."""
    if all(c in SCRIPTS[mark] for c in body):
        return body.translate(str.maketrans(SCRIPTS[mark], UNICODE[mark]))
    if markup and not (len(body) > 1 and body.isalpha()):
        return f"<sub>{body}</sub>" if mark == "_" else f"<sup>{body}</sup>"
    return mark + body


def plain_tex(tex: str, markup: bool = False) -> str:
    """One formula as text: √dₖ, X Xᵀ, d_model × dₖ, Wᴼ; W^Q (W<sup>Q</sup> with ``markup``, which
    returns HTML)."""
    text = WRAPPERS.sub(lambda m: m[1], html.escape(tex, quote=False) if markup else tex)
    text = re.sub(r"\^\\top(?![A-Za-z])|\^\{\\top\}", "ᵀ", text).replace("-", "−")
    text = SCRIPT.sub(lambda m: _script(m[1], m[2] if m[2] is not None else m[3], markup), text)
    text = FRAC.sub(lambda m: f"{_group(m[1])}/{_group(m[2])}", text)
    text = SQRT.sub(lambda m: "√" + _group(m[1]), text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: SYMBOLS.get(m[1], m[1]), text)
    text = re.sub(r"\\[,;! ]", " ", text).replace("\\{", "{").replace("\\}", "}")
    text = text.replace("{", "").replace("}", "")
    return re.sub(r" {2,}", " ", text).strip()


def _group(tex: str) -> str:
    return tex if re.fullmatch(r"\w+", tex) else f"({tex})"


def plain(text: str, markup: bool = False) -> str:
    """Text with each ``$...$`` formula in it written as text (``plain_tex``)."""
    return TEX.sub(lambda m: plain_tex(m[1] if m[1] is not None else m[2], markup), text)


def plain_html(content: str) -> str:
    """HTML with each formula (MathML) replaced by its plain text: for the search index and link
    previews."""
    return WITH_TEX.sub(lambda m: html.escape(plain_tex(html.unescape(m[1])), quote=False), content)


def typeset_page(content: str, page) -> str:
    """A page's formulas as MathML; a notebook page's table of contents reads them as plain text."""
    if page.file.src_uri.endswith(".ipynb"):
        for item in toc_items(page.toc):
            item.title = plain(item.title, markup=True)
        return typeset_notebook(content)
    return typeset(content)
