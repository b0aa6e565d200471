"""The figures' disk cache, read without matplotlib: a build that finds every figure cached draws nothing.

Every rendered SVG is kept in ``.cache/figures/`` under a key of everything that can change it
(``cache_key``). Which figures exist, and from which example and module each is drawn, is known by
importing the figure modules (``qkvsite.figures.load_all``), and so matplotlib; that registry is kept
beside the SVGs (``registry.json``) with a checksum of every figure module, and read instead while
no module changed. Anything missing is drawn by ``qkvsite.figures``, imported only then.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from importlib.metadata import version
from pathlib import Path

from qkvsite.cache import write_atomically
from qkvsite.config import ROOT, example_device, torch_version

SNIPPETS = ROOT / "snippets"
MODULES = ROOT / "qkvsite" / "figures"  # the drawing code: __init__.py and a module per chapter
CACHE = ROOT / ".cache" / "figures"
REGISTRY = CACHE / "registry.json"
CACHE_FORMAT = "2"  # change to redraw every cached figure
SCHEMES = ("light", "dark")


def file_name(name: str, scheme: str) -> str:
    """figures/<file_name>: <name>.svg for the light scheme, <name>.dark.svg for the dark one."""
    return f"{name}.svg" if scheme == "light" else f"{name}.{scheme}.svg"


def snippet_sources(example: str) -> list[Path]:
    """The example's file and every snippets module it imports, directly or not."""
    return _imports(*_stamp(SNIPPETS / example))


def _stamp(path: Path) -> tuple[Path, int]:
    return path, path.stat().st_mtime_ns


@functools.lru_cache(maxsize=256)
def _imports(path: Path, mtime_ns: int) -> list[Path]:
    seen, todo = [], [path]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if name.startswith("snippets."):
                    module = ROOT / Path(*name.split("."))
                    todo += [module.with_suffix(".py"), module / "__init__.py"]
    return sorted(seen)


def fingerprint(paths) -> str:
    return _fingerprint_of(tuple(_stamp(path) for path in paths))


@functools.lru_cache(maxsize=256)
def _fingerprint_of(stamped: tuple[tuple[Path, int], ...]) -> str:
    """A hash of the files' contents, computed again only when one of them changed (mtime)."""
    digest = hashlib.sha256()
    for path, _ in stamped:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@functools.cache
def matplotlib_version() -> str:
    """The installed matplotlib, without importing it; read once per process."""
    return version("matplotlib")


def cache_key(name: str, example: str, module: Path, lang: str, scheme: str = "light") -> str:
    """Everything that can change figure ``name`` (drawn by ``module`` from ``example``) in ``lang`` and ``scheme``."""
    versions = f"{CACHE_FORMAT} {name} {lang} {scheme} matplotlib {matplotlib_version()} torch {torch_version()}"
    versions += f" {example_device()}"
    sources = [MODULES / "__init__.py", module, *snippet_sources(example)]
    return hashlib.sha256(versions.encode() + fingerprint(sources).encode()).hexdigest()[:24]


def cached_path(name: str, example: str, module: Path, lang: str, scheme: str) -> Path:
    return CACHE / f"{name}.{lang}.{scheme}.{cache_key(name, example, module, lang, scheme)}.svg"


def _modules() -> dict[str, str]:
    """Each figure module (relative to the project) with a checksum of its source."""
    modules = sorted(path for path in MODULES.glob("*.py") if path.stem != "__init__")
    return {str(path.relative_to(ROOT)): fingerprint([path]) for path in modules}


_registry: tuple[dict, dict] = ({}, {})  # the modules' checksums, and what they registered


def registered() -> dict[str, tuple[str, Path]]:
    """Every figure: its name -> (example, module file), from the registry while no figure module changed."""
    global _registry
    modules = _modules()
    if _registry[0] != modules:
        _registry = (modules, _read_registry(modules) or _register(modules))
    return _registry[1]


def _read_registry(modules: dict[str, str]) -> dict | None:
    try:
        registry = json.loads(REGISTRY.read_text(encoding="utf-8"))
        if registry["modules"] == modules:
            return {name: (example, ROOT / module) for name, (example, module) in registry["figures"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        pass  # none yet, or not one _register wrote: the modules tell
    return None


def _register(modules: dict[str, str]) -> dict[str, tuple[str, Path]]:
    from qkvsite.figures import load_all

    figures = {name: (spec.example, spec.module_file) for name, spec in load_all().items()}
    entries = {name: [example, str(module.relative_to(ROOT))] for name, (example, module) in figures.items()}
    write_atomically(REGISTRY, json.dumps({"modules": modules, "figures": entries}, indent=1).encode())
    return figures


# Below this many missing figures, drawing them in the build is quicker than starting worker processes (each
# imports matplotlib and runs its examples again): ``qkvsite.figures.Prerender``.
PARALLEL_FROM = 12


def missing(languages: list[str]) -> int:
    """How many (figure, language) pairs the cache lacks in some scheme."""
    return sum(
        not all(cached_path(name, *spec, lang, scheme).is_file() for scheme in SCHEMES)
        for name, spec in registered().items()
        for lang in languages
    )


def svg(name: str, lang: str, scheme: str = "light") -> bytes:
    """Figure ``name`` in ``lang`` and ``scheme``: from the cache, or drawn (``qkvsite.figures.render``)."""
    path = cached_path(name, *registered()[name], lang, scheme)
    if path.is_file():
        return path.read_bytes()
    from qkvsite.figures import render

    return render(name, lang, scheme)
