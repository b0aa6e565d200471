"""Work every build repeats, done once: Jinja's compiled templates and Pygments' highlighting.

- Each build (one per language, and one per `mkdocs serve` rebuild) makes a new
  Jinja environment that compiles Material's templates again. A bytecode cache
  (``.cache/jinja/``, Jinja's own FileSystemBytecodeCache, keyed by template
  source) keeps the compiled templates.
- Both editions show the same code blocks, and a rebuild highlights every block
  of every page again. pymdownx.highlight calls ``pygments.highlight`` through
  its module; that name is wrapped with a memo keyed by the code, the lexer and
  every formatter option, so a block is highlighted once per process.
  ``tests/test_site.py`` checks that the wrap is in place and changes nothing.
"""

import pymdownx.highlight
from jinja2 import FileSystemBytecodeCache

from qkvsite import config as site

JINJA_CACHE = site.ROOT / ".cache" / "jinja"

_pygments_highlight = pymdownx.highlight.highlight


def _frozen(options: dict) -> tuple:
    return tuple(sorted((key, repr(value)) for key, value in options.items()))


def highlight(code, lexer, formatter, outfile=None):
    """pygments.highlight, memoised: the same code, lexer and formatter options give the same HTML."""
    if outfile is not None:
        return _pygments_highlight(code, lexer, formatter, outfile)
    try:
        key = (type(lexer), _frozen(lexer.options), type(formatter), _frozen(formatter.options))
        hash(key)
    except TypeError:
        return _pygments_highlight(code, lexer, formatter)
    return _cached(code, *key, lexer, formatter)


_memo: dict = {}


def _cached(code, lexer_class, lexer_options, formatter_class, formatter_options, lexer, formatter):
    key = (code, lexer_class, lexer_options, formatter_class, formatter_options)
    if key not in _memo:
        if len(_memo) > 8192:
            _memo.clear()
        _memo[key] = _pygments_highlight(code, lexer, formatter)
    return _memo[key]


pymdownx.highlight.highlight = highlight


def on_env(env, config, files):
    JINJA_CACHE.mkdir(parents=True, exist_ok=True)
    env.bytecode_cache = FileSystemBytecodeCache(str(JINJA_CACHE))
    return env
