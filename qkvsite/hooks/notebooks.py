"""The notebook edition: each chapter executed once, rendered in both languages (``qkvsite.notebooks``).

Before each build every chapter's notebook is generated from its pages and
executed (or its outputs taken from the run cache) into ``docs/notebooks/``;
those files join the build before mkdocs-jupyter and mkdocs-static-i18n see the
files, so each language gets its own notebook page and download. mkdocs-jupyter
only renders them (``execute: false`` in mkdocs.yml).

mkdocs-jupyter renders with the site's own template (``qkvsite/templates/``:
the cells only, without JupyterLab's stylesheet and scripts). It caches each
rendering by the notebook's content, in a directory per language (its eviction
would otherwise drop the other language's entries). Its cache entries are not
checked by mkdocs-jupyter and its key leaves out the template: a manifest
written after each build, with each entry's checksum and those of the template
and the highlighting filter, makes a changed or truncated entry, or every entry
of another template or filter, be deleted, so it is rendered again rather than
served. A clean build renders the pages into that cache in two worker processes
(``RenderAhead``), as mkdocs-jupyter itself would, from the moment the
notebooks are executed, while the figures are still being drawn (at a lower
priority: the build waits for the figures first, for these pages later).

The worker processes (kernels, figures, renderings) are forked from one server
that imports torch first (``qkvsite.kernel``). On a build with much to do
there (``needs_workers``) it is started as the build starts, so that those
imports overlap the rest of MkDocs' start.
"""

import hashlib
import json
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import mkdocs_jupyter
import mkdocs_jupyter.config
from mkdocs.plugins import event_priority
from mkdocs_jupyter.plugin import NotebookFile, _compute_cache_key, _get_cache_path

from qkvsite import config as site
from qkvsite import figure_cache
from qkvsite.hooks import building
from qkvsite.kernel import lower_priority, preloaded, start_server
from qkvsite.notebooks import (
    CACHE,
    GENERATED,
    RENDER_OPTIONS,
    RUNS,
    Edition,
    build_notebooks,
    render_page,
    set_up_rendering,
)

_editions: list[Edition] = []

TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "mkdocs_html" / "notebook.html.j2"
HIGHLIGHT = Path(__file__).resolve().parent.parent / "highlight.py"  # its filter is in every code cell
JUPYTER_TEMPLATES = Path(mkdocs_jupyter.__file__).parent / "templates"  # mkdocs-jupyter's own


def templates() -> Path:
    """mkdocs-jupyter's template directory with its page template (mkdocs_html/notebook.html.j2) the site's."""
    out = CACHE / "nbconvert-templates"
    shutil.copytree(JUPYTER_TEMPLATES / "mkdocs_md", out / "mkdocs_md", dirs_exist_ok=True)  # the table of contents
    page = out / "mkdocs_html" / TEMPLATE.name
    page.parent.mkdir(parents=True, exist_ok=True)
    if not page.exists() or page.read_bytes() != TEMPLATE.read_bytes():
        shutil.copyfile(TEMPLATE, page)
    return out


def _render_cache(config) -> Path:
    return CACHE / "mkdocs-jupyter" / building(config)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _renderer() -> str:
    """What renders a page besides mkdocs-jupyter's cache key: the template and the highlighting filter."""
    return _digest(TEMPLATE) + _digest(HIGHLIGHT)


def check_render_cache(directory: Path) -> list[Path]:
    """Delete every entry the manifest does not vouch for; return what was deleted."""
    manifest_path = directory / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    if manifest.get("template") != _renderer():
        manifest = {}  # rendered with another template or filter
    dropped = [p for p in directory.glob("*.json") if p != manifest_path and manifest.get(p.name) != _digest(p)]
    for path in dropped:
        path.unlink()
    return dropped


def write_render_manifest(directory: Path) -> None:
    if directory.is_dir():
        entries = {p.name: _digest(p) for p in directory.glob("*.json") if p.name != "manifest.json"}
        entries["template"] = _renderer()
        (directory / "manifest.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")


PARALLEL_FROM = 4  # fewer pages to render (an edit under `mkdocs serve`): mkdocs-jupyter renders them itself


class RenderAhead:
    """Every notebook page missing from mkdocs-jupyter's cache, rendered into it in two worker processes.

    mkdocs-jupyter renders one page at a time in the build's process (about 0.4 s each); the workers make the same
    entries, with its own functions and cache keys, while the build goes on with the pages and the other
    languages' passes. ``wait(lang)`` writes a language's entries, and the manifest that vouches for them, before
    mkdocs-jupyter looks for the first of them (``on_pre_page``) or the language's pass checks its cache.
    """

    def __init__(self, options, editions: list[Edition]):
        if options["execute"]:
            raise ValueError("mkdocs-jupyter must not execute the notebooks (execute: false): the build has run them")
        todo: dict[str, dict[Path, Path]] = {}  # language -> cache entry -> notebook page
        for edition in editions:
            directory = CACHE / "mkdocs-jupyter" / edition.lang
            if edition.lang not in todo:
                directory.mkdir(parents=True, exist_ok=True)
                check_render_cache(directory)
                todo[edition.lang] = {}
            source = GENERATED / edition.page
            entry = _get_cache_path(directory, _compute_cache_key(str(source), options, options["execute"]))
            if not entry.exists():
                todo[edition.lang][entry] = source
        self.pending: dict[str, list] = {}  # language -> (cache entry, rendering) pairs
        self.pool = None
        if sum(map(len, todo.values())) < PARALLEL_FROM:
            return
        wanted = {name: options[name] for name in (*RENDER_OPTIONS, "toc_depth")}
        templates_dir = mkdocs_jupyter.config.settings.templates_dir  # as on_config set it
        self.pool = ProcessPoolExecutor(max_workers=2, mp_context=preloaded(), initializer=lower_priority)
        for lang in sorted(todo, key=lambda lang: lang != site.default_language()):  # in the order the build needs
            self.pending[lang] = [
                (entry, self.pool.submit(render_page, str(source), wanted, templates_dir))
                for entry, source in todo[lang].items()
            ]

    def wait(self, lang: str | None = None) -> list[Path]:
        """Write the entries of ``lang`` (of every language if None) once rendered; return them."""
        written = []
        for each in [lang] if lang else list(self.pending):
            entries = [entry for entry, _ in self.pending.get(each, [])]
            for entry, rendering in self.pending.pop(each, []):
                entry.write_text(json.dumps(rendering.result()), encoding="utf-8")  # as mkdocs-jupyter writes it
            if entries:
                write_render_manifest(entries[0].parent)  # its other entries were checked first: it vouches for all
            written += entries
        if not self.pending and self.pool is not None:
            self.pool.shutdown()
        return written


def prerender(languages: list[str]):
    """The figures missing from the cache, drawing in the background (``qkvsite.figures.Prerender``); with none
    missing, matplotlib is not even imported."""
    if not figure_cache.missing(languages):
        return SimpleNamespace(wait=lambda: None)
    from qkvsite.figures import Prerender

    return Prerender(languages)


_ahead: RenderAhead | None = None  # the pages the default language's pass started rendering


def _wait_for_pages(lang: str | None = None) -> None:
    if _ahead is not None:
        _ahead.wait(lang)


def needs_workers() -> bool:
    """Whether this build will fork worker processes: no notebook run is cached, or many figures are missing (a
    clean build). A build with everything cached forks none; one with little to do starts the server when first
    needed."""
    return not any(RUNS.glob("*.json")) or figure_cache.missing(site.languages()) >= figure_cache.PARALLEL_FROM


def on_config(config):
    set_up_rendering(str(templates()))
    if building(config) == site.default_language() and needs_workers():
        start_server()  # it imports torch while MkDocs loads the rest and the notebooks are made from the pages


@event_priority(100)
def on_pre_build(config):
    jupyter = config.plugins.get("mkdocs-jupyter")
    if building(config) == site.default_language():  # the first pass builds every language's notebooks

        def render_ahead(editions: list[Edition]) -> None:  # the pages are written: render them while figures draw
            global _ahead
            if jupyter is not None:
                _ahead = RenderAhead(jupyter.config, editions)

        # the figures missing from their cache are drawn in worker processes while the notebooks run
        figures = prerender(site.languages())
        try:
            _editions[:] = build_notebooks(
                site_url=config.site_url, figures_ready=figures.wait, pages_ready=render_ahead
            )
        finally:
            figures.wait()
    else:
        _wait_for_pages(building(config))  # the default language's pass goes on while this language's pages render
    if jupyter is not None:
        directory = _render_cache(config)
        directory.mkdir(parents=True, exist_ok=True)
        check_render_cache(directory)
        jupyter.config["cache_dir"] = str(directory)


@event_priority(-150)  # after mkdocs-static-i18n (-100)
def on_files(files, config):
    """The notebook pages are pages again.

    mkdocs-jupyter marks .ipynb files as pages (its NotebookFile), and
    mkdocs-static-i18n then rebuilds every file as a plain File: it keeps the
    page's URL but no longer counts it as a page. Each is wrapped again, with the
    URL the i18n plugin gave it and the alternates its language switcher needs.
    """
    jupyter = config.plugins.get("mkdocs-jupyter")
    for file in [f for f in files if f.src_uri.endswith(".ipynb") and f.dest_uri.endswith("index.html")]:
        page = NotebookFile(file, config.use_directory_urls, config.site_dir)
        page.dest_path, page.abs_dest_path, page.url = file.dest_path, file.abs_dest_path, file.url
        # the plugin computes alternates for pages only, so it gave these none: the language switcher's links
        chapter = Path(file.src_uri).name.split(".")[0]
        page.alternates = {
            lang: SimpleNamespace(url=site.url_prefix(lang) + f"notebooks/{chapter}/") for lang in site.languages()
        }
        if jupyter is None or not jupyter.should_include(page):
            raise RuntimeError(f"{file.src_uri}: mkdocs-jupyter does not render this notebook")
        files.remove(file)
        files.append(page)
    return files


@event_priority(100)  # before mkdocs-jupyter looks up the page in its cache
def on_pre_page(page, config, files):
    if page.file.src_uri.endswith(".ipynb"):
        _wait_for_pages(building(config))
    return page


@event_priority(-300)  # after mkdocs-jupyter has written and evicted its cache entries
def on_post_build(config):
    _wait_for_pages()
    # the default language's pass ends after the other languages' passes (mkdocs-static-i18n runs them inside
    # its own post-build), so this writes every language's manifest
    for lang in site.languages():
        write_render_manifest(CACHE / "mkdocs-jupyter" / lang)


def on_serve(server, config, builder):
    """Watch docs/ but not the generated docs/notebooks/: writing them must not start another rebuild."""
    docs = Path(config.docs_dir)
    server.unwatch(str(docs))
    server.watch(str(docs), recursive=False)  # the pages; a new page is seen too
    for entry in docs.iterdir():
        if entry.is_dir() and entry.name != "notebooks":
            server.watch(str(entry))
    return server
