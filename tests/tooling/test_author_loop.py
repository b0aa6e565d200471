"""`mkdocs serve`: what an edit rebuilds, and what the build itself writes without starting another
rebuild."""

import logging
import os
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from qkvsite.config import DOCS, ROOT


@contextmanager
def touched(path: Path):
    """The file looks modified (a newer mtime, the same content); its times are restored
    afterwards."""
    before = path.stat()
    try:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
        yield path
    finally:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


EDITS = [
    "docs/qkv.zh.md",
    "docs/stylesheets/extra.css",
    "mkdocs.yml",
    "snippets/qkv/projections.py",
]
EDITS += ["figures/qkv.py"]


@pytest.fixture(scope="module")
def rebuilt_for(site, tmp_path_factory) -> str:
    """What made a live-reload server, watching what `mkdocs serve` watches, want a rebuild, when
    the files the build generates (``site`` first: it wrote them) and those an author edits were all
    touched at once."""
    from mkdocs.config import load_config
    from mkdocs.livereload import LiveReloadServer

    build = load_config(str(ROOT / "mkdocs.yml"))
    server = LiveReloadServer(
        lambda: None, "127.0.0.1", 0, str(tmp_path_factory.mktemp("served")), polling_interval=0.05
    )
    # the same calls as `mkdocs serve`, in its order
    server.watch(build.docs_dir)
    server.watch(build.config_file_path)
    server = build.plugins.on_serve(server, config=build, builder=lambda: None)
    for item in build.watch:
        server.watch(item)

    events = []  # the server logs each change it rebuilds for
    handler = logging.Handler(logging.DEBUG)
    handler.emit = lambda record: events.append(record.getMessage())
    logger = logging.getLogger("mkdocs.livereload")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    server.observer.start()
    try:
        time.sleep(0.3)  # the observer's first look at the files
        with ExitStack() as stack:
            for path in [*generated(), *(ROOT / edit for edit in EDITS)]:
                stack.enter_context(touched(path))
            time.sleep(0.4)  # several polls
    finally:
        server.observer.stop()
        server.observer.join()
        server.server_close()
        logger.removeHandler(handler)
        logger.setLevel(level)
    return "\n".join(events)


def generated() -> list[Path]:
    """A notebook page mkdocs-jupyter renders and a download, as the build writes them."""
    pages = sorted((DOCS / "notebooks").glob("*.ipynb"))
    downloads = sorted((DOCS / "notebooks").glob("*/*.ipynb"))
    assert pages and downloads, "the build wrote no notebook"
    return [pages[0], downloads[0]]


def test_serve_does_not_rebuild_when_the_build_writes_its_notebooks(rebuilt_for):
    assert rebuilt_for, "no change seen at all"
    for path in generated():
        assert str(path) not in rebuilt_for


@pytest.mark.parametrize("edited", EDITS)
def test_serve_rebuilds_after_an_edit_to_a_page_its_assets_the_settings_a_snippet_or_a_figure(
    rebuilt_for, edited
):
    assert str(ROOT / edited) in rebuilt_for


def test_an_edited_figure_module_is_imported_again_and_its_figures_get_new_cache_keys(
    tmp_path, monkeypatch
):
    # under `mkdocs serve` the build runs in one process: a drawing function edited since it was
    # imported must be the one that draws, and its figures must not be taken from the cache
    from qkvsite import figure_cache
    from qkvsite.figures import FIGURES, load_all

    load_all()
    name = next(name for name, spec in FIGURES.items() if spec.module_file.name == "qkv.py")
    before = FIGURES[name]
    with touched(before.module_file):
        load_all()
        assert FIGURES[name].draw is not before.draw  # defined again by the module, read anew
    load_all()

    def key_after_writing(source: bytes) -> str:
        module.write_bytes(source)
        # a write seen as one, however soon
        os.utime(module, ns=(0, module.stat().st_mtime_ns + 10**9))
        return figure_cache.sources_key(before.example, module)

    # the module's copy, edited
    module, source = tmp_path / "qkv.py", before.module_file.read_bytes()
    key = key_after_writing(source)
    assert key_after_writing(source.replace(b"ax.", b"ax .", 1)) != key
    assert key_after_writing(source) == key
