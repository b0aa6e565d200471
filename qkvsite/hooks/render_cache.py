"""Work every build repeats, done once: Jinja's compiled templates and Pygments' highlighting.

- Each build (one per language, and one per `mkdocs serve` rebuild) makes a new
  Jinja environment that compiles Material's templates again. A bytecode cache
  (``.cache/jinja/``, Jinja's own FileSystemBytecodeCache, keyed by template
  source) keeps the compiled templates.
- nbconvert, which renders the notebook pages for mkdocs-jupyter, makes a new
  Jinja environment for each page and compiles its templates again (a fifth
  of a page's rendering): its environments get the same bytecode cache
  (``cache_nbconvert_templates``, where the pages are rendered).
- Both editions show the same code blocks, and a rebuild highlights every block
  of every page again. pymdownx.highlight calls ``pygments.highlight`` through
  its module; that name is wrapped with a memo keyed by the code, the lexer and
  every formatter option, so a block is highlighted once per process. The
  memo is kept on disk (``.cache/highlight.json``) for the next build, under a
  key that also holds Pygments' version and the site's filter
  (``qkvsite/highlight.py``); a file whose checksum does not match its entries
  (edited, truncated) is not used.
  ``tests/test_site.py`` checks that the wrap is in place and changes nothing.
- pymdownx makes a new HTML formatter for every block, which builds its table of
  token classes and styles again: that table is computed once per style.
- Under ``mkdocs serve`` each rebuild converts the Markdown of every page again,
  about half of a rebuild, for the one page an edit changed. In one process, a
  page's HTML, table of contents and anchors are kept under a key of everything
  the conversion reads (``render_key``): the page's Markdown after the hooks, its
  URL, every file's URL, the Markdown settings, mkdocs.yml, the files its
  ``--8<--`` lines include and the site's own Markdown extensions.
"""

import copy
import hashlib
import json
import re
from pathlib import Path

import pygments
import pymdownx.highlight
from jinja2 import FileSystemBytecodeCache
from mkdocs.structure.pages import Page
from pygments.formatters.html import HtmlFormatter

from qkvsite import config as site
from qkvsite.cache import write_atomically
from qkvsite.dialect import INCLUDE

JINJA_CACHE = site.ROOT / ".cache" / "jinja"
HIGHLIGHT_CACHE = site.ROOT / ".cache" / "highlight.json"

_pygments_highlight = pymdownx.highlight.highlight


def _frozen(options: dict) -> tuple:
    return tuple(sorted((key, repr(value)) for key, value in options.items()))


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def highlight(code, lexer, formatter, outfile=None):
    """pygments.highlight, memoised: the same code, lexer and formatter options give the same HTML."""
    if outfile is not None:
        return _pygments_highlight(code, lexer, formatter, outfile)
    try:
        options = (_name(type(lexer)), _frozen(lexer.options), _name(type(formatter)), _frozen(formatter.options))
    except TypeError:
        return _pygments_highlight(code, lexer, formatter)
    if any(" at 0x" in value for _, value in options[1] + options[3]):
        return _pygments_highlight(code, lexer, formatter)  # an option without a stable repr: no memo
    key = hashlib.sha256(repr((code, options)).encode()).hexdigest()
    memo = _memo()
    if key not in memo:
        if len(memo) > 8192:
            memo.clear()
        memo[key] = _pygments_highlight(code, lexer, formatter)
        _state["changed"] = True
    return memo[key]


def _version() -> str:
    """What else makes the HTML: Pygments, and the site's filter."""
    source = (Path(__file__).resolve().parents[1] / "highlight.py").read_bytes()
    return f"pygments {pygments.__version__} " + hashlib.sha256(source).hexdigest()


def _checksum(entries: dict) -> str:
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()


def load_memo(path: Path = HIGHLIGHT_CACHE) -> dict:
    """The memo a build left on disk, or an empty one: another version, a changed or broken file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["entries"]
        if data["version"] == _version() and data["checksum"] == _checksum(entries):
            return entries
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return {}


def save_memo(entries: dict, path: Path = HIGHLIGHT_CACHE) -> None:
    data = {"version": _version(), "checksum": _checksum(entries), "entries": entries}
    write_atomically(path, json.dumps(data, ensure_ascii=False))


_state: dict = {"memo": None, "changed": False}


def _memo() -> dict:
    if _state["memo"] is None:
        _state["memo"] = load_memo()
    return _state["memo"]


pymdownx.highlight.highlight = highlight


_create_stylesheet = getattr(HtmlFormatter._create_stylesheet, "original", HtmlFormatter._create_stylesheet)
_STYLESHEETS: dict[tuple, tuple[dict, dict]] = {}


def _shared_stylesheet(self):
    """The formatter's token classes and styles, computed once per style and class prefix: pymdownx makes a
    formatter for every block, and each walked every token type of the style again."""
    key = (self.style, self.classprefix)
    if key not in _STYLESHEETS:
        _create_stylesheet(self)
        _STYLESHEETS[key] = (self.ttype2class, self.class2style)
    ttype2class, class2style = _STYLESHEETS[key]
    self.ttype2class, self.class2style = dict(ttype2class), dict(class2style)


_shared_stylesheet.original = _create_stylesheet
HtmlFormatter._create_stylesheet = _shared_stylesheet


_render_page = getattr(Page.render, "original", Page.render)
_RENDERS: dict[str, tuple] = {}  # render_key -> what Page.render sets
EXTENSIONS = [site.ROOT / "qkvsite" / name for name in ("highlight.py", "hooks/math.py", "dialect.py")]


def _stamp(path: Path) -> str:
    try:
        status = path.stat()
    except OSError:
        return f"{path} missing"
    return f"{path} {status.st_mtime_ns} {status.st_size}"


def _included(markdown: str, base_paths: list[str]) -> list[Path]:
    """Every file the ``--8<--`` lines of ``markdown`` name, and those their own such lines name."""
    found, todo = [], [markdown]
    while todo:
        for line in todo.pop().split("\n"):
            if match := INCLUDE.match(line):
                for base in base_paths:  # as pymdownx.snippets finds them: from the working directory
                    path = (Path(base) / match["path"]).resolve()
                    if path.is_file() and path not in found:
                        found.append(path)
                        todo.append(path.read_text(encoding="utf-8"))
                        break
    return found


def render_key(page, config, files) -> str:
    """Everything ``Page.render`` reads."""
    settings = repr((config["markdown_extensions"], config["mdx_configs"], config["validation"]))
    settings = re.sub(r" at 0x[0-9a-f]+", "", settings)  # an object (slugify) by type: mkdocs.yml holds its options
    base_paths = (config["mdx_configs"].get("pymdownx.snippets") or {}).get("base_path", ["."])
    uris = "\n".join(f"{file.src_uri} {file.dest_uri} {file.url}" for file in files)
    stamps = [_stamp(path) for path in [Path(config.config_file_path), *EXTENSIONS]]
    stamps += [_stamp(path) for path in _included(page.markdown, base_paths)]
    parts = [page.file.src_uri, page.url, settings, uris, *stamps, page.markdown]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def render(self, config, files):
    """Page.render, kept in this process for a page whose ``render_key`` did not change."""
    if self.markdown is None:
        return _render_page(self, config, files)  # which says what is missing
    key = render_key(self, config, files)
    kept = _RENDERS.get(key)
    if kept is not None:
        content, toc, title, anchors, links = kept
        linked = {files.get_file_from_path(uri): dict(each) for uri, each in (links or {}).items()}
        if None not in linked:  # this build's File objects (anchor checks read their pages)
            self.content, self.toc, self._title_from_render = content, copy.deepcopy(toc), title
            self.present_anchor_ids = set(anchors)
            if links is not None:
                self.links_to_anchors = linked
            return
    _render_page(self, config, files)
    if len(_RENDERS) > 1024:  # a long serve session: older versions of edited pages
        _RENDERS.clear()
    links = self.links_to_anchors
    links = None if links is None else {file.src_uri: dict(each) for file, each in links.items()}
    toc, anchors = copy.deepcopy(self.toc), set(self.present_anchor_ids)
    _RENDERS[key] = (self.content, toc, self._title_from_render, anchors, links)


render.original = _render_page
Page.render = render


def cache_nbconvert_templates() -> None:
    """Every nbconvert Jinja environment of this process loads compiled templates from JINJA_CACHE."""
    from nbconvert.exporters.templateexporter import TemplateExporter

    create = TemplateExporter._create_environment
    if getattr(create, "qkv_cached", False):
        return

    def _create_environment(self):
        environment = create(self)
        JINJA_CACHE.mkdir(parents=True, exist_ok=True)
        environment.bytecode_cache = FileSystemBytecodeCache(str(JINJA_CACHE))
        return environment

    _create_environment.qkv_cached = True
    TemplateExporter._create_environment = _create_environment


def on_env(env, config, files):
    JINJA_CACHE.mkdir(parents=True, exist_ok=True)
    env.bytecode_cache = FileSystemBytecodeCache(str(JINJA_CACHE))
    return env


def on_post_build(config):
    if _state["changed"]:
        save_memo(_state["memo"])
        _state["changed"] = False
