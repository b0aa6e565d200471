"""`mkdocs serve`: what an edit rebuilds, and what the build itself writes without starting another rebuild."""

import os
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from qkvsite import config
from qkvsite.config import DOCS, ROOT


@contextmanager
def touched(path: Path):
    """The file looks modified (a newer mtime, the same content); its times are restored afterwards."""
    before = path.stat()
    try:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
        yield path
    finally:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.fixture
def watching(site, tmp_path):
    """A live-reload server watching what `mkdocs serve` watches (the same calls, in its order), polled fast.

    ``site`` first: the build has written the generated notebooks."""
    from mkdocs.config import load_config
    from mkdocs.livereload import LiveReloadServer

    build = load_config(str(ROOT / "mkdocs.yml"))
    server = LiveReloadServer(lambda: None, "127.0.0.1", 0, str(tmp_path), polling_interval=0.1)
    server.watch(build.docs_dir)
    server.watch(build.config_file_path)
    server = build.plugins.on_serve(server, config=build, builder=lambda: None)
    for item in build.watch:
        server.watch(item)
    server.observer.start()

    def rebuilds_after_touching(path: Path) -> bool:
        time.sleep(0.3)  # the observer's first look at the files is taken
        server._want_rebuild = False
        with touched(path):
            time.sleep(0.6)  # several polls
        return server._want_rebuild

    yield rebuilds_after_touching
    server.observer.stop()
    server.observer.join()
    server.server_close()


def test_serve_does_not_rebuild_when_the_build_writes_its_notebooks(watching):
    generated = sorted((DOCS / "notebooks").rglob("*.ipynb"))
    assert generated, "the build wrote no notebook"
    assert not watching(generated[0])  # a page mkdocs-jupyter renders
    assert not watching(generated[-1])  # a download


@pytest.mark.parametrize(
    "edited",
    [
        "docs/qkv.zh.md",
        "docs/stylesheets/extra.css",
        "mkdocs.yml",
        "snippets/qkv/projections.py",
        "qkvsite/figures/qkv.py",
    ],
)
def test_serve_rebuilds_after_an_edit_to_a_page_its_assets_the_settings_a_snippet_or_a_figure(watching, edited):
    assert watching(ROOT / edited)


def test_an_edited_figure_module_is_imported_again_and_its_figures_get_new_cache_keys(tmp_path, monkeypatch):
    # under `mkdocs serve` the build runs in one process: a drawing function edited since it was imported must be
    # the one that draws, and its figures must not be taken from the cache
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
        os.utime(module, ns=(0, module.stat().st_mtime_ns + 10**9))  # a write seen as one, however soon
        return figure_cache.cache_key(name, before.example, module, config.default_language())

    # the module's copy, edited: hashed by its path from the file system's root, as the project's are by theirs
    monkeypatch.setattr(figure_cache, "ROOT", Path(tmp_path.anchor))
    module, source = tmp_path / "qkv.py", before.module_file.read_bytes()
    key = key_after_writing(source)
    assert key_after_writing(source.replace(b"ax.", b"ax .", 1)) != key
    assert key_after_writing(source) == key
