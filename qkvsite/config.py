"""The site's settings, from one source: MkDocs' own config of mkdocs.yml.

In a build, that is the build's config (``use``, from ``qkvsite.plugin``'s ``on_config``);
elsewhere (the tests, the pytest plugin, ``python -m qkvsite.prepare``) it is
``mkdocs.config.load_config()`` of the same file, loaded again when the file changes. Each rule
lives here once: which language a page is in, where that language's pages are served, and which
pages are chapters. ``DOCS`` is the config's ``docs_dir``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MKDOCS_YML = ROOT / "mkdocs.yml"

_build = None  # the config of the build this process runs, once its on_config has run
_loaded: dict = {}  # mkdocs.yml's (mtime, size) when it was last loaded -> its config


def use(config) -> None:
    """The running build's config is the settings source from now on (``mkdocs serve`` makes a new
    one for each rebuild)."""
    global _build
    _build = config


def settings():
    """MkDocs' config of mkdocs.yml: the running build's, else loaded (``load_config``) and loaded
    again whenever the file changed."""
    if _build is not None:
        return _build
    status = MKDOCS_YML.stat()
    stamp = (status.st_mtime_ns, status.st_size)
    if stamp not in _loaded:
        from mkdocs.config import load_config

        _loaded.clear()
        _loaded[stamp] = load_config(str(MKDOCS_YML))
    return _loaded[stamp]


def docs_dir() -> Path:
    """The pages' directory: the config's ``docs_dir``."""
    return Path(settings()["docs_dir"])


def __getattr__(name: str) -> Path:
    """``DOCS`` is ``docs_dir()``, read when asked (importing this module loads no config)."""
    if name == "DOCS":
        return docs_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def snippet_settings() -> dict:
    """The pymdownx.snippets options exactly as mkdocs.yml sets them, paths made absolute."""
    options = dict(settings()["mdx_configs"]["pymdownx.snippets"])
    root = Path(settings()["config_file_path"]).parent
    options["base_path"] = [str(root / base) for base in options.get("base_path", ["."])]
    return options


def i18n() -> dict:
    """mkdocs-static-i18n's settings (its languages)."""
    return settings()["plugins"]["i18n"].config


def words(text: dict, lang: str) -> dict:
    """Labels in one language: each entry of ``text`` is (Chinese, English), one string for both, or
    a dict of such entries (the figures', the Verification page's)."""
    index = ("zh", "en").index(lang)
    pick = lambda value: value[index] if isinstance(value, tuple) else value  # noqa: E731
    return {k: words(v, lang) if isinstance(v, dict) else pick(v) for k, v in text.items()}


def languages() -> list[str]:
    """Every language built, the default first."""
    langs = i18n()["languages"]
    return [
        lang["locale"] for lang in sorted(langs, key=lambda lang: not lang.get("default", False))
    ]


def default_language() -> str:
    return languages()[0]


def site_name(lang: str) -> str:
    """The site's name in ``lang``: its i18n language entry's, else mkdocs.yml's."""
    (entry,) = [each for each in i18n()["languages"] if each["locale"] == lang]
    return entry.get("site_name") or settings()["site_name"]


def url_prefix(lang: str) -> str:
    """Where a language's pages live in the site: the default at the root, the others under
    <lang>/."""
    return "" if lang == default_language() else f"{lang}/"


PAGE_NAME = re.compile(r"^(?P<name>.+)\.(?P<lang>[a-z]{2})\.md$")


def language_of(path: str | Path) -> str:
    """The language of docs/<name>.<lang>.md."""
    match = PAGE_NAME.match(Path(path).name)
    return match["lang"] if match else default_language()


def page_name(path: str | Path) -> str:
    match = PAGE_NAME.match(Path(path).name)
    return match["name"] if match else Path(path).stem


def page_url(name: str, lang: str) -> str:
    """The URL of a page relative to the site root: 'en/qkv/', '' for the default home page."""
    return url_prefix(lang) + ("" if name == "index" else f"{name}/")


def source_pages() -> list[Path]:
    """Every page written by hand: docs/<name>.<lang>.md."""
    return sorted(p for p in docs_dir().glob("*.md") if PAGE_NAME.match(p.name))


def _nav_pages(items) -> list[str]:
    out = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out.extend(_nav_pages(value) if isinstance(value, list) else [value])
    return out


# The sections every chapter ends with, in this order, per language
# (tests/content/test_chapter_skeleton.py); the FAQ ends with the references too. A reference list
# is left out of the search index: its titles would outrank the pages that explain what they name.
SUMMARY_HEADING = {"zh": "小结", "en": "Summary"}
EXERCISES_HEADING = {"zh": "练习", "en": "Exercises"}
REFERENCES_HEADING = {"zh": "参考资料与延伸阅读", "en": "References and further reading"}

# where an example runs outside the page-block runner (the notebooks' kernels, the figure workers):
# one torch thread (they share the cores; outputs do not depend on it) and no Kineto profiler log
# (every start and stop on stderr)
EXAMPLE_ENV = {"OMP_NUM_THREADS": "1", "KINETO_LOG_LEVEL": "6"}
CHAPTERS_SECTION = 0  # the chapters are the first section of the nav
# the nav section of their notebooks, added at build time (nav_translations names it)
NOTEBOOKS_SECTION = "笔记本"


def chapters() -> list[str]:
    """The chapters, in order: the pages of the nav's chapter section (each gets a notebook)."""
    sections = [next(iter(item.values())) for item in settings()["nav"] if isinstance(item, dict)]
    sections = [entries for entries in sections if isinstance(entries, list)]
    return [page.removesuffix(".md") for page in _nav_pages(sections[CHAPTERS_SECTION])]


TORCH_VERSIONS = ROOT / ".ci" / "torch-versions"


def torch_versions() -> list[tuple[str, str]]:
    """(torch, python) of every row of the table in .ci/torch-versions: the oldest supported
    first."""
    text = TORCH_VERSIONS.read_text(encoding="utf-8")
    table = re.search(r'^VERSIONS="\n(.*?)^"', text, re.M | re.S)[1]
    return [
        tuple(line.split()[:2])
        for line in table.splitlines()
        if line.strip() and not line.startswith("#")
    ]


def oldest_supported() -> tuple[str, str]:
    """The oldest torch and Python the examples support, e.g. ("2.1", "3.10")."""
    torch, python = torch_versions()[0]
    return ".".join(torch.split(".")[:2]), python
