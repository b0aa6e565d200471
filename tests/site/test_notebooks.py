"""Notebook edition: generated from the chapter pages, each chapter executed once, shared by both
languages."""

import html
import os
import re
import urllib.parse
from pathlib import Path

import nbformat
import pytest

from qkvsite import config, machine, notebook_runs, notebooks
from qkvsite.cache import Cache
from qkvsite.config import DOCS, ROOT, chapters, snippet_settings
from qkvsite.dialect import Page, version_tuple
from qkvsite.notebook_runs import cached_outputs, run_key, store_outputs, strip_comment
from qkvsite.notebooks import chapter_markdown, chapter_notebook, code_of, page_code_of
from qkvsite.pytest_plugin import NUMBER

LANGS = config.languages()
CASES = [(chapter, lang) for chapter in chapters() for lang in LANGS]
IDS = [f"{chapter}.{lang}" for chapter, lang in CASES]


def edition(site, lang):
    return site / config.url_prefix(lang)


def page_text(chapter, lang):
    return (DOCS / f"{chapter}.{lang}.md").read_text(encoding="utf-8")


def download(site, chapter, lang):
    return nbformat.read(
        edition(site, lang) / "notebooks" / chapter / f"{chapter}.ipynb", as_version=4
    )


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_notebook_code_is_exactly_the_chapter_pages_code(chapter, lang):
    notebook = chapter_notebook(Page(DOCS / f"{chapter}.{lang}.md"), chapter)
    assert page_code_of(notebook) == [
        block.code.rstrip("\n") for block in Page(DOCS / f"{chapter}.{lang}.md").blocks
    ]


@pytest.mark.parametrize("chapter", chapters())
def test_both_editions_of_a_chapter_share_one_execution(chapter):
    codes = [
        page_code_of(chapter_notebook(Page(DOCS / f"{chapter}.{lang}.md"), chapter))
        for lang in LANGS
    ]
    assert all(code == codes[0] for code in codes)


def test_the_same_chapter_gives_the_same_notebook_file():
    # nbformat's cell ids are random: a notebook rewritten on every build would never let mkdocs
    # serve settle
    page = Page(DOCS / "qkv.zh.md")
    assert nbformat.writes(chapter_notebook(page, "qkv")) == nbformat.writes(
        chapter_notebook(page, "qkv")
    )


def test_notebook_follows_an_edited_snippet(tmp_path):
    original = (ROOT / "snippets/dot_product/two_vectors.py").read_text(encoding="utf-8")
    (tmp_path / "snippets/dot_product").mkdir(parents=True)
    (tmp_path / "snippets/dot_product/two_vectors.py").write_text(
        original.replace("1.0, 0.8", "1.0, 0.7")
    )
    settings = {**snippet_settings(), "base_path": [str(tmp_path)]}
    text = '# T\n\n```python\n--8<-- "snippets/dot_product/two_vectors.py:dot"\n```\n'
    before = chapter_notebook(Page(DOCS / "dot-product.zh.md", text), "dot-product")
    after = chapter_notebook(Page(DOCS / "dot-product.zh.md", text, settings), "dot-product")
    assert "1.0, 0.8" in before.cells[-1].source and "1.0, 0.7" in after.cells[-1].source
    assert run_key(code_of(before)) != run_key(code_of(after))


# --- the run cache: never a stale or edited entry ---


@pytest.fixture
def runs(tmp_path, monkeypatch):
    cache = Cache("notebook-runs", ".json")
    cache.directory = tmp_path
    monkeypatch.setattr(notebook_runs, "RUNS", cache)
    return tmp_path


OUTPUTS = [[{"output_type": "stream", "name": "stdout", "text": "3\n"}]]


def test_a_stored_run_is_reused_for_the_same_code(runs):
    key = run_key(["print(1 + 2)"])
    store_outputs(key, OUTPUTS)
    assert cached_outputs(key, 1) == OUTPUTS


def test_a_run_of_other_code_or_another_torch_is_not_reused(runs, monkeypatch):
    store_outputs(run_key(["print(1 + 2)"]), OUTPUTS)
    assert cached_outputs(run_key(["print(1 + 3)"]), 1) is None
    monkeypatch.setattr(machine, "torch_version", lambda: "9.9.9")
    assert cached_outputs(run_key(["print(1 + 2)"]), 1) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry: entry.replace(b'"3\\n"', b'"4\\n"'),  # an edited output
        lambda entry: entry[: len(entry) // 2],  # cut short
        lambda entry: entry.split(b"\n", 1)[1],  # no checksum
    ],
    ids=["edited", "truncated", "no-checksum"],
)
def test_a_damaged_run_entry_is_not_used_and_is_deleted(runs, damage):
    key = run_key(["print(1 + 2)"])
    store_outputs(key, OUTPUTS)
    (entry,) = runs.iterdir()
    entry.write_bytes(damage(entry.read_bytes()))
    assert cached_outputs(key, 1) is None
    assert not entry.exists()


def test_a_run_entry_with_the_wrong_number_of_cells_is_not_used(runs):
    key = run_key(["print(1 + 2)"])
    store_outputs(key, OUTPUTS * 2)
    assert cached_outputs(key, 1) is None


def test_a_cell_that_raises_fails_the_execution():
    from nbclient.exceptions import CellExecutionError

    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        notebook_runs.execute(["x = 1", "1 / 0"])


def test_a_kernels_own_stderr_stays_out_of_the_build_output_unless_its_run_fails(
    monkeypatch, capfd, caplog
):
    # the kernel's Python writes the time of each import to its stderr, before ipykernel starts
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")
    assert notebook_runs.execute(["print(6 * 7)"]) == [
        [{"output_type": "stream", "name": "stdout", "text": "42\n"}]
    ]
    assert "import time:" not in capfd.readouterr().err
    caplog.set_level("ERROR", logger="mkdocs.plugins.qkv")
    from nbclient.exceptions import DeadKernelError

    with pytest.raises(DeadKernelError):
        notebook_runs.execute(["import os; os._exit(3)"])
    assert "import time:" not in capfd.readouterr().err
    assert "the failed notebook kernel wrote to stderr" in caplog.text
    assert "import time:" in caplog.text


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
    # a process and session of its own, ipykernel's shell, an empty working directory, the
    # environment of the build, nothing left from an earlier kernel

    monkeypatch.setenv("QKV_KERNEL_TEST", "seen")
    runs = [notebook_runs.execute([KERNEL_FACTS])[0][0]["text"].splitlines() for _ in range(2)]
    for facts, env in runs:
        shell, pid, leader, listing, imported = facts.split(" ")
        assert (shell, leader, listing) == ("ZMQInteractiveShell", "True", "[]")
        assert "torch" in imported.split(",")  # imported by the cell: no torch before it
        assert int(pid) != os.getpid()
        assert env == "seen False"
    assert runs[0][0].split(" ")[1] != runs[1][0].split(" ")[1]


def test_chapters_executed_side_by_side_each_get_their_own_outputs():
    outputs = notebook_runs.execute_all([["x = 0", "print(x)"], ["x = 1", "print(x)"]], at_once=2)
    assert [cells[1][0]["text"] for cells in outputs] == ["0\n", "1\n"]


def test_a_rendering_the_manifest_does_not_vouch_for_is_rendered_again(tmp_path):
    from qkvsite.cache import check_directory, manifest, vouch_for_directory

    pages = (
        tmp_path / "pages"
    )  # as mkdocs-jupyter's: it deletes what it does not know there, so the manifest is beside
    pages.mkdir()
    (pages / "a.json").write_text('{"content": "<p>ok</p>"}', encoding="utf-8")
    (pages / "b.json").write_text('{"content": "<p>ok</p>"}', encoding="utf-8")
    vouch_for_directory(pages, "renderer 1")
    assert manifest(pages).parent == tmp_path
    (pages / "b.json").write_text('{"content": "<p>edited</p>"}', encoding="utf-8")
    (pages / "c.json").write_text('{"content": "<p>unknown</p>"}', encoding="utf-8")
    assert sorted(p.name for p in check_directory(pages, "renderer 1")) == ["b.json", "c.json"]
    assert [p.name for p in pages.iterdir()] == ["a.json"]
    # another template, say
    assert [p.name for p in check_directory(pages, "renderer 2")] == ["a.json"]


def test_renderings_of_another_template_go_to_another_directory(tmp_path, monkeypatch):
    from qkvsite.hooks import notebooks as hook

    before = hook.rendered_pages("en")
    edited = tmp_path / "notebook.html.j2"
    edited.write_text(
        hook.TEMPLATE.read_text(encoding="utf-8") + "<!-- edited -->", encoding="utf-8"
    )
    monkeypatch.setattr(hook, "TEMPLATE", edited)
    assert hook.rendered_pages("en") != before and hook.rendered_pages("en").parent == before.parent


def test_nbconvert_finds_the_sites_notebook_template_first_on_jupyters_path(monkeypatch):
    # mkdocs-jupyter names its own template directory; $JUPYTER_PATH's templates come before it
    from types import SimpleNamespace

    from mkdocs_jupyter.config import settings
    from nbconvert.exporters import HTMLExporter
    from nbconvert.filters.highlight import Highlight2HTML

    from qkvsite.hooks import notebooks as hook

    monkeypatch.setenv("JUPYTER_PATH", "")
    jupyter = SimpleNamespace(config={"execute": False, "cache_dir": ""})
    hook.set_up_rendering(SimpleNamespace(plugins={"mkdocs-jupyter": jupyter}))
    exporter = HTMLExporter(
        template_file="mkdocs_html/notebook.html.j2",
        extra_template_paths=[settings.templates_dir],
        filters={
            "highlight_code": Highlight2HTML()
        },  # as mkdocs-jupyter gives it (its own, for the cells' code)
    )
    assert exporter.template.filename == str(hook.TEMPLATE)
    assert jupyter.config["cache_dir"] == str(hook.rendered_pages(config.default_language()))


def test_a_rebuild_makes_again_only_the_notebooks_of_edited_chapters_and_keeps_every_run(
    site, monkeypatch
):
    # `site` first: its build filled the run cache (the same SITE_URL), so nothing is executed here
    from qkvsite.prepare import Notebooks, prepare
    from tests.conftest import REPO_URL, SITE_URL

    made, original = [], notebook_runs.chapter_notebooks
    record = lambda chapters, **kw: made.append(chapters) or original(chapters, **kw)  # noqa: E731
    monkeypatch.setattr(notebook_runs, "chapter_notebooks", record)
    monkeypatch.setattr(Notebooks, "made", {})  # a new process
    build = lambda: prepare(SITE_URL, REPO_URL, [])  # noqa: E731
    build()
    assert made == [chapters()]
    made.clear()
    build()
    assert made == [[]]  # nothing changed: nothing made
    made.clear()
    # a new build of the same process (`mkdocs serve`)
    monkeypatch.setattr(notebook_runs.RUNS, "used", set())
    edited = chapters()[1]
    Notebooks.made[edited] = ("made from an older page", Notebooks.made[edited][1])
    build()
    assert made == [[edited]]
    # none evicted at the end of the build
    assert {run for _, run in Notebooks.made.values()} <= notebook_runs.RUNS.used
    made.clear()
    download = notebook_runs.generated() / notebook_runs.Edition(chapters()[0], LANGS[0]).download
    written = download.read_bytes()
    # another build's links
    download.write_bytes(written.replace(SITE_URL.encode(), b"http://127.0.0.1:8000/"))
    build()
    assert made == [[chapters()[0]]] and download.read_bytes() == written


def test_a_notebook_embeds_the_figures_the_workers_drew_none_is_drawn_again(
    site, monkeypatch, caplog
):
    # `site` first: every run is cached; one figure of the first chapter is not
    from qkvsite import figure_cache, prepare
    from tests.conftest import REPO_URL, SITE_URL, DrawnWhenAsked

    chapter, lang = chapters()[0], config.default_language()
    drawings = figure_cache.Drawings(LANGS)
    name = next(
        name
        for name in drawings.figures
        if f"figures/{name}.svg" in (DOCS / f"{chapter}.{lang}.md").read_text("utf-8")
    )
    figure_cache.CACHE.path(drawings.keys[name, lang, "light"]).unlink()
    monkeypatch.setattr(prepare.workers, "pool", DrawnWhenAsked)
    monkeypatch.setattr(prepare.Notebooks, "made", {})  # a new process: every notebook is written
    caplog.set_level("INFO", logger="mkdocs.plugins.qkv")
    prepare.prepare(SITE_URL, REPO_URL, [])
    assert "drawn in the build's process" not in caplog.text
    download = notebook_runs.generated() / notebook_runs.Edition(chapter, lang).download
    assert figure_cache.CACHE.get(drawings.keys[name, lang, "light"]) is not None
    assert name in download.read_text("utf-8")


# --- the built site ---


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_notebook_page_shows_the_outputs_of_its_execution(site, chapter, lang):
    page = (edition(site, lang) / "notebooks" / chapter / "index.html").read_text(encoding="utf-8")
    assert page.count("jp-OutputArea-output") > 0
    shown = html.unescape(page)  # nbconvert writes ' as &#39;
    for block in Page(DOCS / f"{chapter}.{lang}.md").blocks:
        if block.expected_output:
            first_line = block.expected_output.splitlines()[0]
            if block.output.comparison:  # the notebook's own run measured or rounded its numbers
                assert NUMBER.sub("#", first_line) in NUMBER.sub("#", shown), first_line
            else:
                assert first_line in shown, first_line


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_notebook_page_carries_the_sites_scripts_only_and_no_stylesheet_of_its_own(
    site, chapter, lang
):
    page = (edition(site, lang) / "notebooks" / chapter / "index.html").read_text(encoding="utf-8")
    chapter_page = (edition(site, lang) / chapter / "index.html").read_text(encoding="utf-8")
    scripts = lambda html: sorted(
        Path(src).name for src in re.findall(r'<script src="([^"]*)"', html)
    )  # noqa: E731
    # the chapter page's, but the widgets' viewer: a notebook leaves the widgets out
    assert scripts(page) == [name for name in scripts(chapter_page) if name != "widgets.js"]
    assert "text/x-mathjax-config" not in page and "<clipboard-copy" not in page
    # no JupyterLab stylesheet, and not the Pygments one mkdocs-jupyter appends as a Python list
    # (every rule dead)
    content = page[page.index('<div class="md-content"') : page.index('<footer class="md-footer"')]
    assert "<style" not in content


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_notebook_page_links_its_download_and_colab_and_says_it_is_a_notebook(site, chapter, lang):
    from tests.conftest import REPO_URL

    page = (edition(site, lang) / "notebooks" / chapter / "index.html").read_text(encoding="utf-8")
    button = (
        rf'<a class="md-button" (download="" href="{chapter}\.ipynb"|href="{chapter}\.ipynb" '
        r"download)"
    )
    assert re.search(button, page)
    assert f'href="{notebooks.colab_url(REPO_URL, chapter, lang)}"' in page
    title = Page(DOCS / f"{chapter}.{lang}.md").title
    h1 = notebooks.TITLE[lang].format(title)
    assert (
        f"<title>{html.escape(h1, quote=False)}" in page
        and f">{html.escape(h1, quote=False)}<" in page
    )
    nbformat.validate(download(site, chapter, lang))


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_a_downloaded_notebook_says_how_to_run_it_and_does_not_link_itself(site, chapter, lang):
    first = download(site, chapter, lang).cells[0].source
    assert notebooks.RUN_IT[lang] in first
    assert ".ipynb" not in first and "qkv-notebook-links" not in first and "download" not in first


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_downloaded_notebook_carries_the_chapters_figures(site, chapter, lang):
    attached = [
        name for cell in download(site, chapter, lang).cells for name in cell.get("attachments", {})
    ]
    shown = re.findall(r"\]\(figures/([\w-]+\.svg)\)", page_text(chapter, lang))
    # nbformat writes a cell's attachments in the order of their names
    assert sorted(attached) == sorted(shown)  # none for a chapter without figures


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_downloaded_notebook_carries_the_outputs_of_a_fresh_kernel_run_of_exactly_its_code(
    site, chapter, lang
):
    # the build ran the chapter top to bottom in a fresh kernel (or reused a run of the same code,
    # torch, Python and device); the run key in the notebook ties its outputs to its code
    notebook = download(site, chapter, lang)
    code = code_of(notebook)
    assert notebook.metadata["qkv"]["run"] == run_key([strip_comment(code[0]), *code[1:]])
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    assert not any(output.output_type == "error" for cell in cells for output in cell.outputs)
    # what the cells print, and nothing on stderr (torch's profiler logs every start and stop there
    # unless told not to)
    assert [
        output.text for cell in cells for output in cell.outputs if output.get("name") == "stderr"
    ] == []


@pytest.mark.parametrize("lang", LANGS)
def test_a_notebook_first_checks_for_the_oldest_supported_torch(lang):
    notebook = chapter_notebook(Page(DOCS / f"qkv.{lang}.md"), "qkv")
    setup = code_of(notebook)[0]
    torch_version, python = config.oldest_supported()
    assert (
        f'%pip install "torch>={torch_version}"' in setup and "Python" in setup and python in setup
    )


def test_a_box_is_drawn_and_a_collapsible_one_folds_in_the_notebook_too_unless_it_holds_code():
    text = (
        '# 2. Title\n\n??? success "Answer with `code`"\n\n    It folds.\n\n???+ info '
        '"Open"\n\n    Open at first.\n\n!!! note "Note"\n\n    A box.\n\n??? example "Code"\n\n  '
        "  ```python\n    x = 1\n    ```\n"
    )
    markdown = chapter_markdown(Page(DOCS / "qkv.en.md", text=text), "qkv")
    folded = (
        '<details class="success"><summary>Answer with <code>code</code></summary>\n\nIt '
        "folds.\n\n</details>"
    )
    assert folded in markdown
    assert '<details class="info" open><summary>Open</summary>' in markdown
    assert (
        '<aside class="admonition note"><p class="admonition-title">Note</p>\n\nA box.\n\n</aside>'
        in markdown
    )
    assert "**Code**\n\n```python\nx = 1\n```" in markdown  # code stays a cell of its own


@pytest.mark.parametrize("lang", LANGS)
def test_a_notebooks_setup_cell_names_the_newest_torch_one_of_its_cells_needs(lang):
    def setup(chapter: str) -> str:
        return code_of(chapter_notebook(Page(DOCS / f"{chapter}.{lang}.md"), chapter))[0]

    oldest = version_tuple(config.oldest_supported()[0])
    newest = {}
    for chapter in chapters():
        needs = [b.requires for b in Page(DOCS / f"{chapter}.{lang}.md").blocks if b.requires]
        newer = [v for v in needs if version_tuple(v) > oldest]
        newest[chapter] = max(newer, key=version_tuple) if newer else None
    assert any(newest.values()), "no chapter needs a newer torch: nothing to check"
    for chapter, version in newest.items():
        if version:  # the newest requirement of its cells, named in its first cell
            assert "requires torch >= X.Y" in setup(chapter) and version in setup(chapter), chapter
        else:  # every cell runs on the oldest supported torch
            assert "requires torch" not in setup(chapter), chapter


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_every_section_link_and_contents_entry_of_a_notebook_page_leads_to_its_section(
    site, chapter, lang
):
    ids = lambda html: set(re.findall(r'\bid="([^"]+)"', html))  # noqa: E731
    links = lambda html, to: {
        urllib.parse.unquote(a) for a in re.findall(rf'href="{to}#([^"]+)"', html)
    }  # noqa: E731
    root = Path(site) / config.url_prefix(lang)
    notebook = (root / "notebooks" / chapter / "index.html").read_text(encoding="utf-8")
    # within the notebook page (a browser decodes %E6...)
    assert links(notebook, "") <= ids(notebook)
    chapter_page = (root / chapter / "index.html").read_text(encoding="utf-8")
    assert links(notebook, rf"\.\./\.\./{chapter}/") <= ids(chapter_page)  # on the chapter page


@pytest.mark.parametrize("chapter, lang", CASES, ids=IDS)
def test_a_downloaded_notebook_links_the_published_site_not_relative_paths(site, chapter, lang):
    from tests.conftest import SITE_URL

    text = "\n".join(
        cell.source for cell in download(site, chapter, lang).cells if cell.cell_type == "markdown"
    )
    assert "](../" not in text
    assert f"]({SITE_URL}{config.url_prefix(lang)}{chapter}/)" in text
