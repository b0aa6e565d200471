"""The pages' Python highlighting: fewer elements, the colours that carry meaning, each block lexed
once.

Pygments gives every token its own ``<span>`` (9,000 of the FAQ's 12,700 elements; each costs the
browser style and layout time). Names and whitespace, which Material shows uncoloured, and operators
and punctuation, which it greys, become plain text, and neighbours of one type one token (a notebook
page's Lighthouse blocking time fell from about 180 ms to 70 ms). Keywords, strings, numbers,
comments, builtins and ``in``/``not`` keep their colours. Both editions show the same code and
``mkdocs serve`` rebuilds every page on every edit, so lexing, a pure function of the text, is done
once per block in a process (half a second of each rebuild). mkdocs.yml and the notebook pages'
template name ``PageLexer`` by its alias ``qkv-python``, registered in pyproject.toml (Pygments'
plugin entry point).
"""

import functools

from pygments.filter import Filter
from pygments.lexers import get_lexer_by_name
from pygments.lexers.python import PythonLexer
from pygments.token import Name, Operator, Punctuation, Text
from pygments.util import ClassNotFound


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


class PageLexer(PythonLexer):
    name, aliases, filenames, mimetypes = "Python (qkv pages)", ["qkv-python"], [], []

    def __init__(self, **options):
        super().__init__(**options)
        self.add_filter(Lighter())

    def get_tokens_unprocessed(self, text, stack=("root",)):
        return iter(python_tokens(text, tuple(stack)))


@functools.lru_cache(maxsize=4096)  # about 450 distinct blocks in the site
def python_tokens(text: str, stack: tuple[str, ...]) -> tuple:
    return tuple(PythonLexer().get_tokens_unprocessed(text, stack))


def require_page_lexer() -> None:
    """Without its entry point, pymdownx.highlight would show every Python block as plain text,
    silently."""
    try:
        get_lexer_by_name("qkv-python")
    except ClassNotFound:
        raise RuntimeError(
            "no Pygments lexer qkv-python: install the project (pip install --no-deps -e .)"
        ) from None
