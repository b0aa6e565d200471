"""Lighter code highlighting: fewer elements on every page, the colours that carry meaning kept.

Pygments gives each token of a code block its own ``<span>``; on the FAQ that was 9,000 of the page's 12,700
elements, and every element costs the browser style and layout time. Material colours a plain name (``.n``)
like unstyled code, and whitespace shows no colour: names are plain text, and whitespace joins the token
before it. Operators (``.o``) and punctuation (``.p``), which Material greys (a contrast of about 4.5:1 on
the code background), are plain text too: on a chapter page they were two spans in five, and Lighthouse's
blocking time of a notebook page fell from about 180 ms to 70 ms without them. Neighbours of one type are one
token. Keywords, strings, numbers, comments, builtins and word operators (``in``, ``not``) keep their colours.
mkdocs.yml gives the filter to pymdownx.highlight's Python lexer (``extend_pygments_lang``); the notebook
pages' code cells get it too (``lighter_notebooks``).
"""

from pygments.filter import Filter
from pygments.token import Name, Operator, Punctuation, Text


class Lighter(Filter):
    def __repr__(self):  # stable, for the highlighting memo's key (qkvsite.hooks.render_cache)
        return "Lighter()"

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


def lighter_notebooks() -> None:
    """The notebook pages' code cells get the filter too.

    mkdocs-jupyter highlights a code cell with nbconvert's ``_pygments_highlight``, under that name in its own
    module; the name is wrapped to give the lexer the filter (qkvsite.notebooks.set_up_rendering).
    """
    import mkdocs_jupyter.nbconvert2 as nbconvert2
    from nbconvert.filters.highlight import _pygments_highlight

    def highlight(source, output_formatter, language="ipython", metadata=None, **lexer_options):
        return _pygments_highlight(source, output_formatter, language, metadata, filters=[Lighter()], **lexer_options)

    highlight.qkv_lighter = True
    if not getattr(nbconvert2._pygments_highlight, "qkv_lighter", False):
        nbconvert2._pygments_highlight = highlight
