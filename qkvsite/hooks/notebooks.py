"""The notebook edition in the build (the notebooks are made by ``qkvsite.prepare``), and the
end of a build: every cache's eviction (``finish``).

mkdocs-jupyter renders the notebook pages (``execute: false``) with the site's template,
``qkvsite/jupyter/nbconvert/templates/`` (the cells only), which nbconvert finds first on
$JUPYTER_PATH. It caches each rendering by the notebook and its options, in a directory per
language (its eviction would drop the other language's entries) named after what its key leaves
out (the template, the renderers' versions); a manifest (``qkvsite.cache``) vouches for each
entry, and any other is deleted before mkdocs-jupyter reads it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import SimpleNamespace

from mkdocs_jupyter.plugin import NotebookFile

from qkvsite import cards, figure_cache, notebook_runs
from qkvsite import config as site
from qkvsite.cache import (
    CACHE,
    check_directory,
    evict_unknown,
    key,
    make_directory,
    manifest,
    marked,
    versions,
    vouch_for_directory,
)
from qkvsite.hooks import building
from qkvsite.upstream import require

log = logging.getLogger("mkdocs.plugins.qkv")
# nbconvert/templates/mkdocs_html/notebook.html.j2
JUPYTER_PATH = site.ROOT / "qkvsite" / "jupyter"
TEMPLATE = JUPYTER_PATH / "nbconvert" / "templates" / "mkdocs_html" / "notebook.html.j2"
RENDERERS = ("mkdocs-jupyter", "nbconvert", "pygments", "mistune", "jupytext", "nbformat")


def set_up_rendering(config) -> None:
    """mkdocs-jupyter renders with the site's template, into this pass's language's cache
    directory."""
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None:
        return
    if jupyter.config["execute"]:
        raise ValueError(
            "mkdocs-jupyter must not execute the notebooks (execute: false): the build has run them"
        )
    paths = os.environ.get("JUPYTER_PATH", "").split(os.pathsep)
    if str(JUPYTER_PATH) not in paths:
        os.environ["JUPYTER_PATH"] = os.pathsep.join([str(JUPYTER_PATH), *filter(None, paths)])
    jupyter.config["cache_dir"] = str(rendered_pages(building(config)))


def made_by() -> str:
    """What renders a notebook page besides what mkdocs-jupyter's cache key holds."""
    return key(TEMPLATE, versions(*RENDERERS))


def rendered_pages(lang: str) -> Path:
    return CACHE / "mkdocs-jupyter" / f"{lang}-{made_by()[:12]}"


def check_rendered_pages(config) -> None:
    """Delete every rendering of this pass's language that the manifest does not vouch for."""
    directory = rendered_pages(building(config))
    make_directory(directory.parent).joinpath(directory.name).mkdir(exist_ok=True)
    # the build made the directory of the renderings: never another program's
    if marked(directory.parent):
        check_directory(directory, made_by())


def notebook_pages_are_pages(files, config):
    """The notebook pages are pages again.

    mkdocs-jupyter marks .ipynb files as pages (its NotebookFile), and mkdocs-static-i18n then
    rebuilds every file as a plain File: it keeps the page's URL but no longer counts it as a
    page. Each is wrapped again, with the URL the i18n plugin gave it and the alternates its
    language switcher needs.
    """
    jupyter = config.plugins.get("mkdocs-jupyter")
    switcher = [f for f in files.documentation_pages() if not f.src_uri.endswith(".ipynb")]
    if "i18n" in config.plugins and switcher:  # what the language switcher reads on a page file
        require(
            hasattr(switcher[0], "alternates"), "mkdocs-static-i18n", "a page file's alternates"
        )
    require(
        jupyter is not None and hasattr(jupyter, "should_include"),
        "mkdocs-jupyter",
        "its plugin's should_include(file)",
    )
    for file in [
        f for f in files if f.src_uri.endswith(".ipynb") and f.dest_uri.endswith("index.html")
    ]:
        try:
            page = NotebookFile(file, config.use_directory_urls, config.site_dir)
        except TypeError:
            require(False, "mkdocs-jupyter", "NotebookFile(file, use_directory_urls, site_dir)")
        page.dest_path, page.abs_dest_path, page.url = file.dest_path, file.abs_dest_path, file.url
        # the plugin computes alternates for pages only, so it gave these none: the language
        # switcher's links
        chapter = Path(file.src_uri).name.split(".")[0]
        page.alternates = {
            lang: SimpleNamespace(url=site.url_prefix(lang) + f"notebooks/{chapter}/")
            for lang in site.languages()
        }
        if not jupyter.should_include(page):
            raise RuntimeError(f"{file.src_uri}: mkdocs-jupyter does not render this notebook")
        files.remove(file)
        files.append(page)
    return files


def edit_the_chapter_page(page) -> None:
    """A notebook page is generated from its chapter page: "edit this page" edits the chapter
    page."""
    if page.edit_url and page.file.src_uri.startswith("notebooks/"):
        chapter = Path(page.file.src_uri).stem  # <chapter>.<lang>
        page.edit_url = page.edit_url.rsplit("/docs/", 1)[0] + f"/docs/{chapter}.md"


def without_dead_style(html: str, page) -> str:
    """A notebook page without the <style> mkdocs-jupyter appends to it: nbconvert's Pygments CSS
    written as a Python list (its repr), so every rule of it is dead CSS. The cells are
    highlighted in Material's colours."""
    body, style, css = html.rpartition("<style>")
    return (
        body.rstrip()
        if style and page.file.src_uri.endswith(".ipynb") and css.lstrip().startswith("['")
        else html
    )


def finish(config) -> None:
    """After the last pass: vouch for the renderings mkdocs-jupyter kept, and drop the entries no
    pass used."""
    for lang in site.languages():
        vouch_for_directory(rendered_pages(lang), made_by())
    kept = {rendered_pages(lang) for lang in site.languages()}
    parent = CACHE / "mkdocs-jupyter"
    older = [d for d in parent.glob("*") if d.is_dir() and d not in kept] if marked(parent) else []
    for directory in older:
        for path in [*directory.glob("*"), manifest(directory)]:
            path.unlink(missing_ok=True)
        directory.rmdir()
    for cache in (figure_cache.CACHE, cards.CACHE, notebook_runs.RUNS):
        cache.evict()
    evict_unknown()


def watch(server, config):
    """Watch docs/ but not the generated docs/notebooks/: writing them must not start another
    rebuild."""
    docs = Path(config.docs_dir)
    server.unwatch(str(docs))
    server.watch(str(docs), recursive=False)  # the pages; a new page is seen too
    for entry in docs.iterdir():
        if entry.is_dir() and entry.name != "notebooks":
            server.watch(str(entry))
    return server
