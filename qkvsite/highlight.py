"""Lighter code highlighting: fewer elements on every page, the colours that carry meaning kept.

Pygments gives each token of a code block its own ``<span>``; on the FAQ that was 9,000 of the page's 12,700
elements, and every element costs the browser style and layout time. Material colours a plain name (``.n``)
like unstyled code, and whitespace shows no colour: names are plain text, and whitespace joins the token
before it. Operators (``.o``) and punctuation (``.p``), which Material greys (a contrast of about 4.5:1 on
the code background), are plain text too: on a chapter page they were two spans in five, and Lighthouse's
blocking time of a notebook page fell from about 180 ms to 70 ms without them. Neighbours of one type are one
token. Keywords, strings, numbers, comments, builtins and word operators (``in``, ``not``) keep their colours.
mkdocs.yml gives the filter to pymdownx.highlight's Python lexer (``extend_pygments_lang``).
"""

from pygments.filter import Filter
from pygments.token import Name, Operator, Punctuation, Text


class Lighter(Filter):
    def filter(self, lexer, stream):
        merged_type, merged = None, []
        for ttype, value in stream:
            if not value.strip():  # whitespace
                ttype = merged_type or Text
            elif ttype is Name or ttype is Operator or ttype in Punctuation:
                ttype = Text
            if ttype is not merged_type and merged:
                yield merged_type, "".join(merged)
                merged = []
            merged_type = ttype
            merged.append(value)
        if merged:
            yield merged_type, "".join(merged)
