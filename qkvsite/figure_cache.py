"""Which figures there are and their drawings in the cache, known without importing matplotlib.

Every figure is declared in a chapter module of ``figures/`` as ``@figure("<name>", "<example>")``,
its example a path under ``snippets/`` (a string, or a module-level name bound to one). ``declared``
reads those declarations from the modules' source, so a build that finds every drawing cached
imports neither matplotlib nor torch. A drawing is an entry of ``Cache("figures")`` under a key of
everything that can change it (``Drawings.keys``); ``qkvsite.figures`` draws the missing ones.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import runpy
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from qkvsite.cache import Cache, key, versions
from qkvsite.config import ROOT
from qkvsite.machine import example_device, measuring_machine

SNIPPETS = ROOT / "snippets"
MODULES = ROOT / "figures"  # a module per chapter (content)
LIBRARY = ROOT / "qkvsite" / "figures.py"  # the drawing library they use
FONTS = ROOT / "qkvsite" / "fonts.py"
SCHEMES = ("light", "dark")
MACHINE = ROOT / "qkvsite" / "machine.py"  # what a figure says of the machine it was measured on
CACHE = Cache("figures", ".svg")


def file_name(name: str, scheme: str) -> str:
    """figures/<file_name>: <name>.svg for the light scheme, <name>.dark.svg for the dark one."""
    return f"{name}.svg" if scheme == "light" else f"{name}.{scheme}.svg"


# a pure function of the source text: a rebuild parses only the files an edit changed
@lru_cache(maxsize=64)
def decorated(source: str, decorator: str) -> dict[str, tuple[str, frozenset[str]]]:
    """name -> (example, the keywords set to True) of every ``@decorator(name, example, ...)`` of a
    module's source (``@figure`` here, ``@widget`` in ``qkvsite.widgets``): its two arguments are
    string literals, or module-level names bound to string literals."""
    tree = ast.parse(source)
    strings = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }
    found = {}
    for node in ast.walk(tree):
        for call in getattr(node, "decorator_list", []):
            if isinstance(call, ast.Call) and getattr(call.func, "id", None) == decorator:
                name, example = (
                    arg.value if isinstance(arg, ast.Constant) else strings[arg.id]
                    for arg in call.args
                )
                if name in found:
                    raise ValueError(f"{decorator} {name!r} is declared twice in one module")
                on = frozenset(k.arg for k in call.keywords if getattr(k.value, "value", False))
                found[name] = (example, on)
    return found


def declared() -> dict[str, tuple[str, Path, bool]]:
    """Every figure: its name -> (example, module file, whether it shows times measured where it is
    drawn)."""
    figures = {}
    for module in sorted(MODULES.glob("*.py")):
        if module.name == "__init__.py":
            continue
        for name, (example, keywords) in decorated(module.read_text("utf-8"), "figure").items():
            if name in figures:
                raise ValueError(
                    f"figure {name!r} is declared twice ({figures[name][1].name}, {module.name})"
                )
            figures[name] = (example, module, "measured" in keywords)
    return figures


def snippet_sources(example: str) -> list[Path]:
    """The example's file and every snippets module it imports, directly or not."""
    seen, todo = [], [SNIPPETS / example]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        for name in _imports(path.read_text(encoding="utf-8")):
            module = ROOT / Path(*name.split("."))
            todo += [module.with_suffix(".py"), module / "__init__.py"]
    return sorted(seen)


@lru_cache(maxsize=256)  # a pure function of the source text, as decorated
def _imports(source: str) -> tuple[str, ...]:  # the snippets modules a source imports
    names = []
    for node in ast.walk(ast.parse(source)):
        names += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
    return tuple(name for name in names if name.startswith("snippets."))


def sources(example: str, module: Path) -> list[Path]:
    """The files a figure drawn by ``module`` from ``example`` is made from: the drawing library,
    the fonts, the machine's description (a measured figure names it), the chapter's figure module,
    the example and what it imports."""
    return [LIBRARY, FONTS, MACHINE, module, *snippet_sources(example)]


def sources_key(example: str, module: Path) -> str:
    """Everything but the language, scheme and machine that can change a figure drawn by ``module``
    from ``example``: its ``sources``, matplotlib, torch and the device the example computes on."""
    return key(versions("matplotlib", "torch"), example_device(), *sources(example, module))


class Drawings:
    """Every figure's drawings, as the cache holds them for one build: the keys are worked out once.
    ``draw`` (name, language, scheme) draws one the cache lacks (``qkvsite.figures.render``);
    without it, that is an error."""

    def __init__(self, languages: list[str], draw: Callable[[str, str, str], bytes] | None = None):
        self.draw = draw
        figures = declared()
        self.figures = {name: (example, module) for name, (example, module, _) in figures.items()}
        sources = {spec: sources_key(*spec) for spec in set(self.figures.values())}
        on_this_machine = {
            name: measuring_machine() for name, (_, _, measured) in figures.items() if measured
        }
        self.keys = {
            (name, lang, scheme): key(
                name, lang, scheme, sources[spec], on_this_machine.get(name, "")
            )
            for name, spec in self.figures.items()
            for lang in languages
            for scheme in SCHEMES
        }

    def missing(self) -> list[tuple[str, str]]:
        """The (figure, language) pairs whose drawing the cache lacks in some scheme."""
        pairs = {
            (name, lang) for (name, lang, scheme), each in self.keys.items() if not CACHE.has(each)
        }
        return sorted(pairs)

    def svg(self, name: str, lang: str, scheme: str = "light") -> bytes:
        """Figure ``name`` in ``lang`` and ``scheme``: from the cache, or drawn now."""
        data = CACHE.get(self.keys[name, lang, scheme])
        if data is None and self.draw is None:
            raise LookupError(f"figure {name!r} ({lang}, {scheme}) is not in the cache")
        return data if data is not None else self.draw(name, lang, scheme)


def run_example(example: str) -> dict:
    """Run snippets/<example> as a script (output discarded); return its variables.

    Memoised by the content of the example and of the snippets modules it imports:
    the figures and widgets of both languages share one run, and an edit runs it again.
    """
    return _run_script(str(SNIPPETS / example), key(*snippet_sources(example)))


@functools.cache
def _run_script(path: str, fingerprint: str) -> dict:
    for module in [m for m in sys.modules if m.startswith("snippets.")]:
        del sys.modules[module]  # imported anew: one of them may have been edited
    with contextlib.redirect_stdout(io.StringIO()):
        return runpy.run_path(path, run_name="__main__")
