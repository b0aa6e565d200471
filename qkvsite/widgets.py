"""The data of the figures a reader can move, computed at build time by the tested examples.

A widget is declared in ``figures/widgets.py`` as ``@widget("<name>", "<example>")``: like a figure
function (``qkvsite.figures``), it receives the namespace of ``snippets/<example>`` after it ran and
the page language, and returns a JSON-able dict holding every state the widget can show (every
slider position, every token), with its labels in that language. The build adds it to each edition
as ``widgets/<name>.json`` (``qkvsite.hooks.widgets``); ``docs/javascripts/widgets.js`` draws it
where a page holds ``<div class="qkv-widget" data-widget="<name>">``. The page keeps the static
figure above it: without JavaScript, and in print, the reader sees that.

The JSON is cached as the figures are (``qkvsite.cache``): under a key of the widget module, this
module, the example and the snippets modules it imports, torch's version and the language. The
declarations are read from the module's source (``declared``), so that a build whose widgets are all
cached imports neither torch nor the module. The prepare stage (``qkvsite.prepare``) computes the
ones the cache lacks (``missing``) in a worker process (``make``), beside the figures.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

from qkvsite.cache import Cache, key, versions
from qkvsite.config import ROOT
from qkvsite.figure_cache import decorated, run_example, snippet_sources

MODULE = ROOT / "figures" / "widgets.py"  # the widgets (content, beside the figure modules)
SNIPPETS = ROOT / "snippets"
CACHE = Cache("widgets", ".json")

Compute = Callable[[dict, str], dict]
WIDGETS: dict[str, tuple[str, Compute]] = {}  # name -> (example, function), once imported


def widget(name: str, example: str) -> Callable[[Compute], Compute]:
    """Register ``compute`` as ``widgets/<name>.json`` in every language, from ``example``."""

    def register(compute: Compute) -> Compute:
        if name in WIDGETS and WIDGETS[name][1].__qualname__ != compute.__qualname__:
            raise ValueError(f"widget {name!r} is registered twice")
        if not (SNIPPETS / example).is_file():
            raise FileNotFoundError(f"widget {name!r}: no example snippets/{example}")
        WIDGETS[name] = (example, compute)
        return compute

    return register


def declared() -> dict[str, str]:
    """Every widget: its name -> its example (a path under ``snippets/``)."""
    if not MODULE.is_file():
        return {}
    declared = decorated(MODULE.read_text(encoding="utf-8"), "widget")
    return {name: example for name, (example, _) in declared.items()}


def widget_key(name: str, example: str, lang: str) -> str:
    """Everything that can change a widget's JSON."""
    sources = [Path(__file__), MODULE, *snippet_sources(example)]
    return key("widget", name, lang, versions("torch"), *sources)


def missing(languages: list[str]) -> list[tuple[str, str]]:
    """The (widget, language) pairs whose JSON the cache lacks."""
    return [
        (name, lang)
        for name, example in declared().items()
        for lang in languages
        if not CACHE.has(widget_key(name, example, lang))
    ]


def make(todo: list[tuple[str, str]]) -> None:
    """Compute and cache the JSON of each (widget, language) pair (in a worker process: the
    languages of a widget share one run of its example)."""
    for name, lang in todo:
        widget_json(name, lang)


def load() -> dict[str, tuple[str, Compute]]:
    """Import (again, if it was imported) ``figures/widgets.py``: every widget registered."""
    WIDGETS.clear()
    name = "figures.widgets"
    if name in sys.modules:
        importlib.reload(sys.modules[name])
    else:
        importlib.import_module(name)
    return WIDGETS


def compute(name: str, lang: str) -> dict:
    """Widget ``name``'s data in ``lang``, computed now from its example."""
    example, function = load()[name]
    return function(run_example(example), lang)


def to_json(data: dict) -> bytes:
    """The JSON the site serves: compact, keys in the order the widget wrote them."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def widget_json(name: str, lang: str) -> bytes:
    """``widgets/<name>.json`` of ``lang`` as the build writes it: from the cache, or computed now
    (and cached)."""
    example = declared()[name]
    return CACHE.get_or_make(widget_key(name, example, lang), lambda: to_json(compute(name, lang)))
