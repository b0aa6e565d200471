"""Formulas typeset as MathML at build time: no math JavaScript in the browser.

Authors write LaTeX, ``$...$`` inline and ``$$...$$`` on lines of their own
(pymdownx.arithmatex in generic mode keeps it as TeX in the HTML); each formula
is converted to MathML here with latex2mathml, which browsers render natively.
A heading with a formula gives itself a readable TOC label and a stable anchor,
``## $X X^\\top$ ... { #anchor data-toc-label="X Xᵀ ..." }`` (tests/test_math.py).
Notebooks keep the ``$...$`` source: Jupyter and Colab render it.
"""

import html
import re
from functools import lru_cache

from latex2mathml.converter import convert

INLINE = re.compile(r'<span class="arithmatex">\\\((.*?)\\\)</span>', re.S)
DISPLAY = re.compile(r'<div class="arithmatex">\\\[(.*?)\\\]</div>', re.S)


@lru_cache(maxsize=4096)
def mathml(tex: str, display: str) -> str:
    try:
        return convert(tex, display=display)
    except Exception as error:  # latex2mathml raises its own error types for TeX it cannot read
        raise ValueError(f"cannot typeset ${tex}$: {error}") from error


def typeset(content: str) -> str:
    content = DISPLAY.sub(lambda m: mathml(html.unescape(m[1]).strip(), "block"), content)
    return INLINE.sub(lambda m: mathml(html.unescape(m[1]).strip(), "inline"), content)


def on_page_content(content, page, config, files):
    return typeset(content)
