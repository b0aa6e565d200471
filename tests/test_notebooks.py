"""Notebook edition: generated from the chapter pages, each chapter executed once, shared by both languages."""

import html
import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from qkvsite import config, figure_cache, notebooks
from qkvsite.config import DOCS, ROOT, chapters, snippet_settings
from qkvsite.dialect import Page
from qkvsite.kernel import LOWER_BY
from qkvsite.notebooks import (
    cached_outputs,
    chapter_notebook,
    code_of,
    page_code_of,
    run_key,
    store_outputs,
    strip_comment,
)

LANGS = config.languages()
CASES = [(chapter, lang) for chapter in chapters() for lang in LANGS]
IDS = [f"{chapter}.{lang}" for chapter, lang in CASES]


def edition(site, lang):
    return site / config.url_prefix(lang)


def page_text(chapter, lang):
    return (DOCS / f"{chapter}.{lang}.md").read_text(encoding="utf-8")


def download(site, chapter, lang):
    return nbformat.read(edition(site, lang) / "notebooks" / chapter / f"{chapter}.ipynb", as_version=4)


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_notebook_code_is_exactly_the_chapter_pages_code(chapter, lang):
    notebook = chapter_notebook(Page(DOCS / f"{chapter}.{lang}.md"), chapter)
    assert page_code_of(notebook) == [block.code.rstrip("\n") for block in Page(DOCS / f"{chapter}.{lang}.md").blocks]


@pytest.mark.parametrize("chapter", chapters())
def test_both_editions_of_a_chapter_share_one_execution(chapter):
    codes = [page_code_of(chapter_notebook(Page(DOCS / f"{chapter}.{lang}.md"), chapter)) for lang in LANGS]
    assert all(code == codes[0] for code in codes)


def test_the_same_chapter_gives_the_same_notebook_file():
    # nbformat's cell ids are random: a notebook rewritten on every build would never let mkdocs serve settle
    page = Page(DOCS / "qkv.zh.md")
    assert nbformat.writes(chapter_notebook(page, "qkv")) == nbformat.writes(chapter_notebook(page, "qkv"))


def test_notebook_follows_an_edited_snippet(tmp_path):
    original = (ROOT / "snippets/dot_product/two_vectors.py").read_text(encoding="utf-8")
    (tmp_path / "snippets/dot_product").mkdir(parents=True)
    (tmp_path / "snippets/dot_product/two_vectors.py").write_text(original.replace("1.0, 0.8", "1.0, 0.7"))
    settings = {**snippet_settings(), "base_path": [str(tmp_path)]}
    text = '# T\n\n```python\n--8<-- "snippets/dot_product/two_vectors.py:dot"\n```\n'
    before = chapter_notebook(Page(DOCS / "dot-product.zh.md", text), "dot-product")
    after = chapter_notebook(Page(DOCS / "dot-product.zh.md", text, settings), "dot-product")
    assert "1.0, 0.8" in before.cells[-1].source and "1.0, 0.7" in after.cells[-1].source
    assert run_key(code_of(before)) != run_key(code_of(after))


# --- the run cache: never a stale or edited entry -----------------------------------------------------------------


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.setattr(notebooks, "RUNS", tmp_path)
    return tmp_path


OUTPUTS = [[{"output_type": "stream", "name": "stdout", "text": "3\n"}]]


def test_a_stored_run_is_reused_for_the_same_code(runs):
    key = run_key(["print(1 + 2)"])
    store_outputs("ch", key, OUTPUTS)
    assert cached_outputs("ch", key, 1) == OUTPUTS


def test_a_run_of_other_code_or_another_torch_is_not_reused(runs, monkeypatch):
    store_outputs("ch", run_key(["print(1 + 2)"]), OUTPUTS)
    assert cached_outputs("ch", run_key(["print(1 + 3)"]), 1) is None
    monkeypatch.setattr(config, "torch_version", lambda: "9.9.9")
    assert cached_outputs("ch", run_key(["print(1 + 2)"]), 1) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry: {**entry, "outputs": [[{**entry["outputs"][0][0], "text": "4\n"}]]},  # an edited output
        lambda entry: {**entry, "outputs": entry["outputs"] * 2},  # the wrong number of cells
        lambda entry: {k: v for k, v in entry.items() if k != "checksum"},
    ],
    ids=["edited", "wrong-shape", "no-checksum"],
)
def test_an_edited_run_entry_is_not_used(runs, damage):
    key = run_key(["print(1 + 2)"])
    store_outputs("ch", key, OUTPUTS)
    path = runs / "ch.json"
    path.write_text(json.dumps(damage(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
    assert cached_outputs("ch", key, 1) is None


def test_a_truncated_run_entry_is_not_used(runs):
    key = run_key(["print(1 + 2)"])
    store_outputs("ch", key, OUTPUTS)
    path = runs / "ch.json"
    path.write_text(path.read_text(encoding="utf-8")[:20], encoding="utf-8")
    assert cached_outputs("ch", key, 1) is None


def test_a_cell_that_raises_fails_the_execution():
    from nbclient.exceptions import CellExecutionError

    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        notebooks.execute(["x = 1", "1 / 0"])


KERNEL_FACTS = """\
import os, sys
shell = get_ipython().__class__.__name__
before = set(sys.modules)
import torch
torch.testing.assert_close(torch.ones(1), torch.ones(1))  # its first call imports more of torch
imported = ",".join(sorted(set(sys.modules) - before)) or "nothing"
print(shell, os.getpid(), os.getsid(0) == os.getpid(), os.listdir("."), imported)
print(os.environ.get("QKV_KERNEL_TEST"), "x" in globals())
x = 1"""


def test_a_chapter_runs_in_a_fresh_ipython_kernel_of_its_own(monkeypatch):
    # forked from the preloaded server (qkvsite.kernel): a process and session of its own, ipykernel's shell, an
    # empty working directory, the environment of the build, nothing left from an earlier kernel; torch, and
    # what it imports on first use, already imported
    import os

    monkeypatch.setenv("QKV_KERNEL_TEST", "seen")
    runs = [notebooks.execute([KERNEL_FACTS])[0][0]["text"].splitlines() for _ in range(2)]
    for facts, env in runs:
        shell, pid, leader, listing, imported = facts.split(" ")
        assert (shell, leader, listing, imported) == ("ZMQInteractiveShell", "True", "[]", "nothing")
        assert int(pid) != os.getpid()
        assert env == "seen False"
    assert runs[0][0].split(" ")[1] != runs[1][0].split(" ")[1]


def test_an_edited_rendering_is_rendered_again(tmp_path):
    from qkvsite.hooks.notebooks import check_render_cache, write_render_manifest

    (tmp_path / "a.json").write_text('{"content": "<p>ok</p>"}', encoding="utf-8")
    (tmp_path / "b.json").write_text('{"content": "<p>ok</p>"}', encoding="utf-8")
    write_render_manifest(tmp_path)
    (tmp_path / "b.json").write_text('{"content": "<p>edited</p>"}', encoding="utf-8")
    (tmp_path / "c.json").write_text('{"content": "<p>unknown</p>"}', encoding="utf-8")
    assert sorted(p.name for p in check_render_cache(tmp_path)) == ["b.json", "c.json"]
    assert [p.name for p in tmp_path.glob("*.json") if p.name != "manifest.json"] == ["a.json"]


def test_renderings_made_with_another_template_are_rendered_again(tmp_path, monkeypatch):
    from qkvsite.hooks import notebooks as hook

    (tmp_path / "a.json").write_text('{"content": "<p>ok</p>"}', encoding="utf-8")
    hook.write_render_manifest(tmp_path)
    assert hook.check_render_cache(tmp_path) == []
    edited = tmp_path / "notebook.html.j2"
    edited.write_text(hook.TEMPLATE.read_text(encoding="utf-8") + "<!-- edited -->", encoding="utf-8")
    monkeypatch.setattr(hook, "TEMPLATE", edited)
    assert [p.name for p in hook.check_render_cache(tmp_path)] == ["a.json"]


@pytest.fixture
def rendering_restored(monkeypatch):
    """What setting up the site's rendering (``notebooks.set_up_rendering``) changes, restored after the test."""
    import mkdocs_jupyter.config
    import mkdocs_jupyter.nbconvert2
    import nbconvert.exporters.html

    for module, name in [
        (mkdocs_jupyter.config.settings, "templates_dir"),
        (mkdocs_jupyter.nbconvert2, "_pygments_highlight"),
        (nbconvert.exporters.html, "BeautifulSoup"),
    ]:
        monkeypatch.setattr(module, name, getattr(module, name))
    return monkeypatch


def test_a_page_rendered_ahead_in_a_worker_is_the_entry_mkdocs_jupyter_writes_itself(
    site, tmp_path, rendering_restored
):
    # `site` first: the notebook pages exist. The build renders them ahead (hooks.notebooks.RenderAhead); an entry
    # must be byte for byte what mkdocs-jupyter, set up as the build sets it, would render and cache, under the
    # key it looks up
    from types import SimpleNamespace

    from jinja2 import FileSystemBytecodeCache
    from mkdocs_jupyter.plugin import Plugin
    from nbconvert.exporters import HTMLExporter

    from qkvsite.hooks import notebooks as hook

    # as the build sets mkdocs-jupyter up: the site's template, the lighter highlighting
    hook.on_config(SimpleNamespace(plugins={}))
    assert isinstance(HTMLExporter().environment.bytecode_cache, FileSystemBytecodeCache)  # compiled once
    plugin = Plugin()
    errors, _ = plugin.load_config({**config._plugin("mkdocs-jupyter"), "cache_dir": str(tmp_path / "own")})
    assert not errors
    plugin.on_pre_build(None)
    editions = [notebooks.Edition(chapters()[0], lang) for lang in LANGS]
    for edition in editions:
        source = str(notebooks.GENERATED / edition.page)
        page = SimpleNamespace(file=SimpleNamespace(abs_src_path=source, src_path=edition.page), abs_url="/")
        plugin.on_pre_page(page, None, None)
        page.render(None, None)  # mkdocs-jupyter renders the page and writes its cache entry
    own = [path.read_bytes() for path in sorted((tmp_path / "own").glob("*.json"))]

    rendering_restored.setattr(hook, "CACHE", tmp_path / "ahead")
    rendering_restored.setattr(hook, "PARALLEL_FROM", 1)
    ahead = hook.RenderAhead(plugin.config, editions)
    # the build waits for the figures and kernels first: the pages render when a core is free
    assert ahead.pool.submit(os.nice, 0).result() == min(19, os.nice(0) + LOWER_BY)
    first, *others = sorted(LANGS, key=lambda lang: lang != config.default_language())
    written = ahead.wait(first)  # the first pass's pages, while the other languages' still render
    assert [path.parent.name for path in written] == [first] and list(ahead.pending) == others
    written += ahead.wait()
    assert [path.parent.name for path in written] == LANGS
    assert sorted(path.name for path in written) == sorted(path.name for path in (tmp_path / "own").glob("*.json"))
    assert sorted(path.read_bytes() for path in written) == sorted(own)
    for lang in LANGS:  # the manifest vouches for them: the next build's check keeps them
        assert hook.check_render_cache(tmp_path / "ahead" / "mkdocs-jupyter" / lang) == []


@pytest.mark.parametrize("lang", LANGS)
def test_a_notebook_page_without_nbconverts_beautifulsoup_pass_is_the_page_it_would_write(
    site, lang, rendering_restored
):
    # `site` first: the notebook pages exist. nbconvert parses each page it renders with BeautifulSoup to add alt
    # text and tabindex attributes, and writes it out again; the site adds them to the text (MarkedPage)
    import bs4
    import nbconvert.exporters.html
    from mkdocs_jupyter.plugin import Plugin

    from qkvsite.hooks import notebooks as hook

    plugin = Plugin()
    assert plugin.load_config(config._plugin("mkdocs-jupyter"))[0] == []
    options = {name: plugin.config[name] for name in (*notebooks.RENDER_OPTIONS, "toc_depth")}
    page = str(notebooks.GENERATED / notebooks.Edition("scaled-dot-product", lang).page)
    templates = str(hook.templates())
    marked = notebooks.render_page(page, options, templates)["content"]
    assert nbconvert.exporters.html.BeautifulSoup is notebooks.MarkedPage
    rendering_restored.setattr(nbconvert.exporters.html, "BeautifulSoup", bs4.BeautifulSoup)
    rendering_restored.setattr(notebooks, "set_up_rendering", lambda templates_dir: None)  # keeps nbconvert's own
    own = notebooks.render_page(page, options, templates)["content"]
    assert marked != own and 'tabindex="0"' in marked
    assert bs4.BeautifulSoup(marked, "html.parser") == bs4.BeautifulSoup(own, "html.parser")


def test_an_image_without_alt_text_gets_nbconverts_and_every_cell_is_focusable():
    page = (
        '<div class="jp-Cell-inputWrapper"><img src="a.png"></div>'
        '<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="text/plain"><img alt="b" src="b.png"></div>'
        '<div class="jp-OutputArea-child">x</div>'
    )
    assert str(notebooks.MarkedPage(page)) == (
        f'<div class="jp-Cell-inputWrapper" tabindex="0"><img alt="{notebooks.NO_ALT}" src="a.png"></div>'
        '<div class="jp-RenderedText jp-OutputArea-output" tabindex="0" data-mime-type="text/plain">'
        '<img alt="b" src="b.png"></div><div class="jp-OutputArea-child">x</div>'
    )


def test_the_worker_server_starts_with_a_build_that_has_much_to_do_there_and_not_with_one_that_has_nothing(
    site, tmp_path, monkeypatch
):
    # `site` first: every run and figure is cached
    from qkvsite.hooks import notebooks as hook

    assert not hook.needs_workers()  # a warm build forks nothing: the server's torch import would be wasted
    monkeypatch.setattr(hook, "RUNS", tmp_path)
    assert hook.needs_workers()  # no notebook run cached: a clean build
    monkeypatch.undo()
    monkeypatch.setattr(figure_cache, "missing", lambda languages: figure_cache.PARALLEL_FROM)
    assert hook.needs_workers()  # enough figures to draw for worker processes


def test_a_rebuild_makes_again_only_the_chapters_whose_sources_changed(site, monkeypatch):
    # `site` first: the build filled the run cache, so nothing is executed here
    from tests.conftest import SITE_URL

    made, original = [], notebooks.chapter_notebook
    monkeypatch.setattr(
        notebooks, "chapter_notebook", lambda page, chapter: made.append(chapter) or original(page, chapter)
    )
    notebooks.build_notebooks(site_url=SITE_URL)
    made.clear()
    notebooks.build_notebooks(site_url=SITE_URL)
    assert made == []
    monkeypatch.setitem(notebooks._made, "qkv", (("an edited page",), notebooks._made["qkv"][1]))
    notebooks.build_notebooks(site_url=SITE_URL)
    assert made == ["qkv"] * len(LANGS)
    made.clear()
    notebooks.build_notebooks(site_url="https://elsewhere.example/")  # every download links the site
    assert sorted(set(made)) == sorted(chapters())
    notebooks.build_notebooks(site_url=SITE_URL)


def test_a_new_process_takes_each_chapters_notebooks_as_made_unless_they_or_what_they_are_made_from_changed(
    site, monkeypatch
):
    # `site` first: the build made the notebooks and filled the run cache, so nothing is executed here
    from importlib.metadata import version

    from tests.conftest import SITE_URL

    made, original = [], notebooks.chapter_notebook
    monkeypatch.setattr(
        notebooks, "chapter_notebook", lambda page, chapter: made.append(chapter) or original(page, chapter)
    )

    def build_in_a_new_process():
        made.clear()
        monkeypatch.setattr(notebooks, "_made", {})
        return notebooks.build_notebooks(site_url=SITE_URL)

    editions = build_in_a_new_process()
    files = {e.download: (notebooks.GENERATED / e.download).read_bytes() for e in editions}
    assert build_in_a_new_process() == editions and made == []  # every chapter as made before
    edited = notebooks.GENERATED / editions[0].download
    edited.write_text(edited.read_text(encoding="utf-8") + " ", encoding="utf-8")
    build_in_a_new_process()
    assert made == [editions[0].chapter] * len(LANGS)  # an edited file: its chapter is made again
    assert {e.download: (notebooks.GENERATED / e.download).read_bytes() for e in editions} == files
    name = re.search(r"\(attachment:([\w-]+)\.svg\)", files[editions[0].download].decode())[1]
    drawing = figure_cache.cached_path(name, *figure_cache.registered()[name], editions[0].lang, "light")
    original_drawing = drawing.read_bytes()
    try:
        drawing.write_bytes(original_drawing.replace(b"</svg>", b"<!-- drawn again --></svg>"))
        build_in_a_new_process()
        assert made == [editions[0].chapter] * len(LANGS)  # a figure it embeds was drawn again
        assert b"drawn again" in (notebooks.GENERATED / editions[0].download).read_bytes()
    finally:
        drawing.write_bytes(original_drawing)
    build_in_a_new_process()
    assert made == [editions[0].chapter] * len(LANGS)
    monkeypatch.setattr(notebooks, "version", lambda name: "0.0" if name == "jupytext" else version(name))
    build_in_a_new_process()
    assert sorted(set(made)) == sorted(chapters())  # another jupytext: every chapter made again
    monkeypatch.undo()
    build_in_a_new_process()


def test_the_pages_are_handed_over_for_rendering_before_the_figures_are_needed_and_the_downloads_after(
    site, monkeypatch
):
    # `site` first: the run cache is full, so nothing is executed here; a new process makes every chapter again
    from tests.conftest import SITE_URL

    monkeypatch.setattr(notebooks, "_made", {})
    editions = [notebooks.Edition(chapter, lang) for chapter in chapters() for lang in LANGS]
    for each in editions:
        (notebooks.GENERATED / each.download).unlink()
    events = []

    def pages_ready(handed):
        assert handed == editions and all((notebooks.GENERATED / e.page).is_file() for e in handed)
        events.append("pages")

    def figures_ready():
        assert not any((notebooks.GENERATED / e.download).exists() for e in editions)  # they embed the figures
        events.append("figures")

    assert notebooks.build_notebooks(site_url=SITE_URL, pages_ready=pages_ready, figures_ready=figures_ready)
    assert events == ["pages", "figures"]
    assert all((notebooks.GENERATED / e.download).is_file() for e in editions)


# --- the built site --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_notebook_page_shows_the_outputs_of_its_execution(site, chapter, lang):
    page = (edition(site, lang) / "notebooks" / chapter / "index.html").read_text(encoding="utf-8")
    assert page.count("jp-OutputArea-output") > 0
    for block in Page(DOCS / f"{chapter}.{lang}.md").blocks:
        if block.expected_output:
            first_line = block.expected_output.splitlines()[0]
            assert first_line in html.unescape(page), first_line  # nbconvert writes ' as &#39;


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_notebook_page_carries_the_sites_scripts_only_and_no_jupyterlab_stylesheet(site, chapter, lang):
    page = (edition(site, lang) / "notebooks" / chapter / "index.html").read_text(encoding="utf-8")
    chapter_page = (edition(site, lang) / chapter / "index.html").read_text(encoding="utf-8")
    scripts = lambda html: sorted(Path(src).name for src in re.findall(r'<script src="([^"]*)"', html))  # noqa: E731
    assert scripts(page) == scripts(chapter_page)
    assert "text/x-mathjax-config" not in page and "<clipboard-copy" not in page
    # what is left is the Pygments stylesheet mkdocs-jupyter's code appends for .highlight (these pages have none)
    styles = "".join(re.findall(r"<style[^>]*>(.*?)</style>", page, re.S))
    assert ".jp-" not in styles and len(styles) < 10_000, len(styles)


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_notebook_page_links_its_download(site, chapter, lang):
    page = (edition(site, lang) / "notebooks" / chapter / "index.html").read_text(encoding="utf-8")
    assert f'href="{chapter}.ipynb"' in page
    nbformat.validate(download(site, chapter, lang))


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_downloaded_notebook_carries_the_chapters_figures(site, chapter, lang):
    attached = [name for cell in download(site, chapter, lang).cells for name in cell.get("attachments", {})]
    shown = re.findall(r"\]\(figures/([\w-]+\.svg)\)", page_text(chapter, lang))
    assert attached == shown and shown


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_downloaded_notebook_carries_the_outputs_of_a_fresh_kernel_run_of_exactly_its_code(site, chapter, lang):
    # the build ran the chapter top to bottom in a fresh kernel (or reused a run of the same code, torch, Python and
    # device); the run key in the notebook ties its outputs to its code
    notebook = download(site, chapter, lang)
    code = code_of(notebook)
    assert notebook.metadata["qkv"]["run"] == run_key([strip_comment(code[0]), *code[1:]])
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    assert not any(output.output_type == "error" for cell in cells for output in cell.outputs)


@pytest.mark.parametrize("lang", LANGS)
def test_a_notebook_first_checks_for_the_oldest_supported_torch(lang):
    notebook = chapter_notebook(Page(DOCS / f"qkv.{lang}.md"), "qkv")
    setup = code_of(notebook)[0]
    torch_version, python = config.oldest_supported()
    assert f'%pip install "torch>={torch_version}"' in setup and "Python" in setup and python in setup


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_a_downloaded_notebook_links_the_published_site_not_relative_paths(site, chapter, lang):
    from tests.conftest import SITE_URL

    text = "\n".join(cell.source for cell in download(site, chapter, lang).cells if cell.cell_type == "markdown")
    assert "](../" not in text
    assert f"]({SITE_URL}{config.url_prefix(lang)}{chapter}/)" in text
