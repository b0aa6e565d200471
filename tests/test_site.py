"""The site as a whole: strict build, every rendered block tested, figures computed, CI config."""

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import Future

import pytest
import torch
import yaml

from qkvsite import config
from qkvsite.config import DOCS, ROOT, source_pages
from qkvsite.dialect import Page
from qkvsite.figures import Prerender, load_all, run_example

LABEL_CONT = {"zh": "接上一段代码", "en": "continues the block above"}


def lang_of(page) -> str:
    return config.language_of(page)


def html_of(site, page):
    """The built HTML of docs/<name>.<lang>.md."""
    url = config.page_url(config.page_name(page), lang_of(page))
    return (site / url / "index.html").read_text(encoding="utf-8")


def test_strict_build_succeeds(site):
    assert (site / "index.html").is_file()


@pytest.mark.parametrize("page", source_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_rendered_python_block_is_collected_and_run(site, page):
    rendered = len(re.findall(r'<div class="language-python[ "]', html_of(site, page)))
    assert rendered == len(Page(page).blocks)


@pytest.mark.parametrize("page", source_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_python_comes_only_from_snippets(page):
    fences = re.findall(r"^```(?:python|py)\b[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)
    for body in fences:
        lines = [line for line in body.splitlines() if line.strip()]
        assert lines and all(re.match(r'--8<-- "snippets/', line) for line in lines), body


@pytest.mark.parametrize("page", source_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_continuations_are_labelled_on_the_page(site, page):
    continuing = sum(block.continues for block in Page(page).blocks)
    titles = [
        re.sub(r"<[^>]+>", "", t) for t in re.findall(r'<span class="filename">(.*?)</span>', html_of(site, page))
    ]
    assert sum(LABEL_CONT[lang_of(page)] in title for title in titles) == continuing


def test_code_blocks_carry_their_language_class(site):
    html = html_of(site, DOCS / "dot-product.zh.md")
    assert 'class="language-python highlight"' in html
    assert 'class="language-python qkv-cont highlight"' in html  # continues the block above
    assert 'class="language-text qkv-output highlight"' in html  # a printed output


@pytest.mark.parametrize("page", source_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_chinese_headings_get_readable_anchors(site, page):
    ids = re.findall(r'<h[2-4] id="([^"]+)"', html_of(site, page))
    assert [i for i in ids if re.fullmatch(r"_\d*", i)] == [], ids


def test_figures_show_the_numbers_the_example_computes(site):
    values = run_example("dot_product/self_similarity.py")
    svg = (site / "figures/similarity-matrix.svg").read_text(encoding="utf-8")
    for v in values["S"].flatten().tolist():
        assert f">{v:.2f}<" in svg
    weights = (site / "figures/softmax-weights.svg").read_text(encoding="utf-8")
    for v in values["A"].flatten().tolist() + values["A"].sum(dim=-1).tolist():
        assert f">{v:.3f}<" in weights
    summed = (site / "figures/weighted-sum.svg").read_text(encoding="utf-8")
    for v in values["Z"][0].tolist():
        assert f">{v:.3f}<" in summed


def test_figure_labels_are_text_in_the_page_language(site):
    assert "猫" in (site / "figures/similarity-matrix.svg").read_text(encoding="utf-8")
    assert ">cat<" in (site / "en/figures/similarity-matrix.svg").read_text(encoding="utf-8")


def test_a_build_that_finds_every_figure_cached_starts_no_figure_workers(site):
    figures = Prerender(config.languages())  # the build behind `site` drew and cached every figure
    assert figures.count == 0 and figures.workers is None
    figures.wait()


def test_starting_the_figure_workers_does_not_hold_up_the_build_while_they_fork(site, monkeypatch, tmp_path):
    # forking the first worker waits until the server has imported torch (seconds): the build goes on meanwhile
    import concurrent.futures
    import threading

    from qkvsite import figures

    forked = threading.Event()

    class SlowToFork:
        def __init__(self, **options):
            self.submitted = []

        def submit(self, function, jobs):
            forked.wait(timeout=5)
            self.submitted.append(jobs)
            done = Future()
            done.set_result(None)
            return done

        def shutdown(self, cancel_futures):
            pass

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", SlowToFork)
    # every figure missing: all to be drawn
    monkeypatch.setattr(figures, "_cached_path", lambda name, lang, scheme: tmp_path / f"{name}.{lang}.{scheme}.svg")
    drawing = Prerender(config.languages())
    assert drawing.count == len(figures.FIGURES) * len(config.languages())
    pool = drawing.workers.pool
    assert pool.submitted == []  # still forking: the constructor did not wait for it
    forked.set()
    drawing.wait()
    assert sorted(job for jobs in pool.submitted for job in jobs) == sorted(
        (name, lang) for name in figures.FIGURES for lang in config.languages()
    )


def test_a_build_that_finds_every_figure_cached_does_not_import_matplotlib(site, monkeypatch):
    from qkvsite import figure_cache
    from qkvsite.hooks import notebooks

    for module in ["matplotlib", "qkvsite.figures"]:
        monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    monkeypatch.setattr(figure_cache, "_registry", ({}, {}))  # as in a fresh process: the registry is read
    notebooks.prerender(config.languages()).wait()  # the build behind `site` drew and cached every figure
    for name in figure_cache.registered():
        for lang in config.languages():
            assert all(figure_cache.svg(name, lang, scheme).startswith(b"<?xml") for scheme in figure_cache.SCHEMES)


def test_the_figure_registry_is_read_while_no_figure_module_changed_and_made_again_otherwise(tmp_path, monkeypatch):
    from qkvsite import figure_cache

    registry = tmp_path / "registry.json"
    monkeypatch.setattr(figure_cache, "REGISTRY", registry)
    forget = lambda: monkeypatch.setattr(figure_cache, "_registry", ({}, {}))  # noqa: E731  a fresh process
    forget()
    figures = {name: (spec.example, spec.module_file) for name, spec in load_all().items()}
    assert figure_cache.registered() == figures
    written = json.loads(registry.read_text(encoding="utf-8"))
    written["figures"]["only-in-the-registry"] = ["dot_product/two_vectors.py", "qkvsite/figures/dot_product.py"]
    registry.write_text(json.dumps(written), encoding="utf-8")
    forget()
    assert "only-in-the-registry" in figure_cache.registered()  # no module changed: the registry is read
    written["modules"]["qkvsite/figures/dot_product.py"] = "an older checksum"
    registry.write_text(json.dumps(written), encoding="utf-8")
    forget()
    assert figure_cache.registered() == figures  # a module changed: registered again from the modules
    registry.write_text(registry.read_text(encoding="utf-8")[:40], encoding="utf-8")  # cut short
    forget()
    assert figure_cache.registered() == figures


HEX = re.compile(r"#[0-9a-f]{6}\b")


@pytest.mark.parametrize("prefix", ["", "en/"])
def test_both_schemes_of_a_figure_are_one_drawing_in_each_schemes_colours(site, prefix):
    from qkvsite.figures import PLACEHOLDERS

    for name in load_all():
        light = (site / f"{prefix}figures/{name}.svg").read_text(encoding="utf-8")
        dark = (site / f"{prefix}figures/{name}.dark.svg").read_text(encoding="utf-8")
        assert not any(p in light or p in dark for p in PLACEHOLDERS.values()), f"{name}: a placeholder colour left"
        assert HEX.sub("#", light) == HEX.sub("#", dark), f"{name}: the schemes differ in more than colours"
        assert light != dark
        assert 'style="fill: #1e2029"' in dark and "#1e2029" not in light, f"{name}: dark paper"


def test_a_scheme_colour_inside_a_raster_image_fails_the_figure():
    import matplotlib.pyplot as plt

    from qkvsite import figures

    def bad_cells_in_paper(ns, lang):
        fig, ax = plt.subplots(figsize=(1, 1))
        cmap = plt.get_cmap("Blues").with_extremes(bad=figures.palette()["paper"])
        ax.imshow([[0.0, float("nan")], [1.0, 0.5]], cmap=cmap)
        return fig

    figures.FIGURES["raster-test"] = figures.Figure("raster-test", "dot_product/two_vectors.py", bad_cells_in_paper)
    try:
        with pytest.raises(ValueError, match="raster-test.*inside a raster image"):
            figures._draw("raster-test", "en")
    finally:
        del figures.FIGURES["raster-test"]


def test_every_figure_is_used_and_none_is_committed():
    for lang in ["zh", "en"]:
        text = "\n".join(p.read_text(encoding="utf-8") for p in source_pages() if lang_of(p) == lang)
        for name in load_all():
            assert f"](figures/{name}.svg)" in text, f"figure {name} is drawn but no {lang} page shows it"
    tracked = subprocess.run(["git", "ls-files", "docs"], cwd=ROOT, capture_output=True, text=True).stdout
    assert not re.search(r"\.(svg|png|jpe?g|gif)$", tracked, re.M), tracked


@pytest.mark.parametrize("hook", sorted(p.stem for p in (ROOT / "overrides" / "hooks").glob("*.py")))
def test_each_hook_file_hands_mkdocs_every_event_handler_of_its_module(hook):
    import importlib.util
    import inspect

    from mkdocs.plugins import EVENTS

    module = importlib.import_module(f"qkvsite.hooks.{hook}")
    functions = inspect.getmembers(module, inspect.isfunction)
    handlers = {name for name, _ in functions if name.removeprefix("on_") in EVENTS}
    spec = importlib.util.spec_from_file_location(f"hook_file_{hook}", ROOT / "overrides" / "hooks" / f"{hook}.py")
    hook_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook_file)  # as MkDocs loads it
    handed = {name for name in dir(hook_file) if name.removeprefix("on_") in EVENTS}
    assert handlers <= handed, f"overrides/hooks/{hook}.py does not hand MkDocs {sorted(handlers - handed)}"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the failure on a machine without CUDA")
def test_require_cuda_fails_without_cuda():
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "tests/test_dot_product.py"],
        cwd=ROOT,
        env={**os.environ, "REQUIRE_CUDA": "1"},
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "REQUIRE_CUDA=1 but torch.cuda.is_available() is False" in result.stdout + result.stderr


def test_pytest_header_names_the_device(pytestconfig):
    from qkvsite.pytest_plugin import pytest_report_header

    (line,) = pytest_report_header(pytestconfig)
    assert ("cuda (" if torch.cuda.is_available() else "cpu (CUDA not available)") in line


WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name):
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "tool",
    [["actionlint", "-color=false"], ["zizmor", "--offline", "--persona=auditor", str(WORKFLOWS)]],
    ids=["actionlint", "zizmor-auditor"],
)
def test_workflows_pass_linters(tool):
    exe = shutil.which(tool[0], path=os.path.dirname(sys.executable))
    assert exe, f"{tool[0]} is not installed (requirements.txt)"
    result = subprocess.run([exe, *tool[1:]], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_action_is_pinned_by_commit_sha():
    for path in WORKFLOWS.glob("*.yml"):
        for uses in re.findall(r"uses:\s*(\S+)", path.read_text(encoding="utf-8")):
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), f"{path.name}: {uses}"


def triggers(flow) -> dict:
    return flow[True]  # `on:` parses as True


def test_gpu_workflow_runs_only_trusted_events_and_is_never_cancelled():
    gpu = workflow("gpu.yml")
    assert set(triggers(gpu)) == {"push", "workflow_dispatch", "schedule"}
    assert triggers(gpu)["push"] == {"branches": ["main"]}
    assert gpu["concurrency"]["cancel-in-progress"] is False
    (job,) = gpu["jobs"].values()
    assert "self-hosted" in job["runs-on"] and "gpu" in job["runs-on"]
    assert job["env"]["REQUIRE_CUDA"] == "1" and job["env"]["CHROMIUM"]
    assert job["timeout-minutes"] <= 120
    assert any("setup-python" in step.get("uses", "") for step in job["steps"])
    # no other workflow may use the GPU runner
    for path in WORKFLOWS.glob("*.yml"):
        if path.name != "gpu.yml":
            assert "self-hosted" not in path.read_text(encoding="utf-8"), path.name


def test_pages_deploys_only_a_push_to_main_whose_cpu_tests_passed():
    ci = workflow("ci.yml")
    pages, deploy = ci["jobs"]["pages"], ci["jobs"]["deploy"]
    assert pages["needs"] == ["cpu", "torch-versions"] and deploy["needs"] == "pages"
    for job in (pages, deploy):
        assert job["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    build = next(step for step in pages["steps"] if step.get("run") == "make build")
    assert build["env"]["SITE_URL"] == "${{ steps.pages.outputs.base_url }}/"
    assert "github.repository" in build["env"]["REPO_URL"]
    assert deploy["concurrency"]["cancel-in-progress"] is False
    assert "pull_request" in triggers(ci)  # the tests themselves run on pull requests


def test_the_published_site_cites_the_records_of_the_commit_it_was_built_from():
    ci = workflow("ci.yml")
    uploads = {
        name: step["with"]["name"]
        for name, job in ci["jobs"].items()
        for step in job["steps"]
        if "upload-artifact" in step.get("uses", "") and "verification" in step["with"]["path"]
    }
    assert set(uploads) == {"cpu", "torch-versions"}
    steps = ci["jobs"]["pages"]["steps"]
    download = next(i for i, step in enumerate(steps) if "download-artifact" in step.get("uses", ""))
    build = next(i for i, step in enumerate(steps) if step.get("run") == "make build")
    assert download < build
    wanted = {"pattern": "verification-*", "path": "verification/records", "merge-multiple": True}
    assert steps[download]["with"] == wanted
    assert all(name.startswith("verification-") for name in uploads.values())


def test_every_job_has_a_timeout_and_minimal_permissions():
    for path in WORKFLOWS.glob("*.yml"):
        flow = workflow(path.name)
        assert flow["permissions"] == {}, path.name
        for name, job in flow["jobs"].items():
            assert job.get("timeout-minutes"), f"{path.name}: {name}"
            assert set(job["permissions"].values()) <= {"read", "write"}
            writes = {k for k, v in job["permissions"].items() if v == "write"}
            if name == "deploy":
                assert job["permissions"] == {"pages": "write", "id-token": "write"}
            elif name == "colab":  # pushes the generated notebooks to their own branch
                assert job["permissions"] == {"contents": "write"} and job["needs"] == "pages"
            else:
                assert not writes, f"{path.name}: {name} writes {writes}"


def test_python_passes_ruff():
    ruff = shutil.which("ruff", path=os.path.dirname(sys.executable))
    assert ruff, "ruff is not installed (requirements.txt)"
    result = subprocess.run([ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# --- build caches that wrap upstream code: in place, and changing nothing ---------------------------------------


def test_highlighting_is_memoised_and_gives_what_pygments_gives():
    import pymdownx.highlight
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    from qkvsite.hooks import render_cache

    assert pymdownx.highlight.highlight is render_cache.highlight, "pymdownx no longer calls pygments by that name"
    code = "x = torch.ones(3)  # three\nprint(x @ x)\n"
    expected = highlight(code, PythonLexer(), HtmlFormatter(cssclass="highlight", wrapcode=True))
    for _ in range(2):  # computed, then remembered
        assert (
            render_cache.highlight(code, PythonLexer(), HtmlFormatter(cssclass="highlight", wrapcode=True)) == expected
        )


@pytest.mark.parametrize("options", [{}, {"style": "monokai", "classprefix": "qkv-", "noclasses": True}])
def test_formatters_sharing_a_stylesheet_give_the_css_and_html_of_their_own(options):
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    from qkvsite.hooks import render_cache

    assert HtmlFormatter._create_stylesheet is render_cache._shared_stylesheet
    code = "x = torch.ones(3)  # three\nprint(x @ x)\n"
    own = HtmlFormatter(**options)
    render_cache._shared_stylesheet.original(own)  # the formatter's table, computed by Pygments itself
    for _ in range(2):  # computed, then shared
        shared = HtmlFormatter(**options)
        assert (shared.ttype2class, shared.class2style) == (own.ttype2class, own.class2style)
        assert shared.get_style_defs(".highlight") == own.get_style_defs(".highlight")
        assert highlight(code, PythonLexer(), shared) == highlight(code, PythonLexer(), own)


def test_a_page_rendered_again_in_one_process_is_taken_from_memory_until_what_it_reads_changes(tmp_path, monkeypatch):
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.pages import Page as MkDocsPage

    from qkvsite.hooks import render_cache

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(
        '# Home\n\nSee [the section](other.md#kept).\n\n```python\n--8<-- "example.py:dot"\n```\n', encoding="utf-8"
    )
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## Kept\n", encoding="utf-8")
    example = tmp_path / "example.py"
    example.write_text("# --8<-- [start:dot]\nprint(1)\n# --8<-- [end:dot]\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nvalidation: {anchors: info}\nmarkdown_extensions:\n  - toc\n  - pymdownx.superfences\n"
        f"  - pymdownx.snippets: {{base_path: ['{tmp_path}'], check_paths: true}}\n",
        encoding="utf-8",
    )
    config = load_config(str(tmp_path / "mkdocs.yml"))
    monkeypatch.setattr(render_cache, "_RENDERS", {})
    renders = []
    monkeypatch.setattr(
        render_cache, "_render_page", lambda *args: renders.append(1) or render_cache.render.original(*args)
    )

    def home():
        files = get_files(config)  # a new build: new File objects
        page = MkDocsPage(None, files.get_file_from_path("index.md"), config)
        page.read_source(config)
        page.render(config, files)
        return page, files

    first, _ = home()
    again, files = home()
    assert len(renders) == 1  # the second came from memory
    assert (again.content, str(again.toc), again.present_anchor_ids) == (
        first.content,
        str(first.toc),
        first.present_anchor_ids,
    )
    assert "print" in again.content
    [linked] = again.links_to_anchors
    assert linked is files.get_file_from_path("other.md")  # this build's File, whose page the anchor check reads
    example.write_text("# --8<-- [start:dot]\nprint(2)\n# --8<-- [end:dot]\n", encoding="utf-8")
    edited, _ = home()
    assert len(renders) == 2 and edited.content != first.content  # an included file changed: converted again


def test_the_highlighting_memo_on_disk_is_used_only_as_it_was_written(tmp_path):
    from qkvsite.hooks.render_cache import load_memo, save_memo

    path = tmp_path / "highlight.json"
    save_memo({"k": "<span>x</span>"}, path)
    assert load_memo(path) == {"k": "<span>x</span>"}
    path.write_text(path.read_text(encoding="utf-8").replace("<span>x", "<span>y"), encoding="utf-8")
    assert load_memo(path) == {}  # edited
    save_memo({"k": "<span>x</span>"}, path)
    path.write_text(path.read_text(encoding="utf-8")[:30], encoding="utf-8")
    assert load_memo(path) == {}  # truncated
    save_memo({"k": "<span>x</span>"}, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, "version": "pygments 0.0"}), encoding="utf-8")
    assert load_memo(path) == {}  # another Pygments or filter


def test_the_sites_python_blocks_are_memoised(monkeypatch):
    # an option whose repr holds an address (a filter without __repr__) would leave every block out of the memo
    import markdown
    from mkdocs.config import load_config

    from qkvsite.hooks import render_cache

    monkeypatch.setitem(render_cache._state, "memo", {})
    monkeypatch.setitem(render_cache._state, "changed", False)
    mkdocs = load_config(str(ROOT / "mkdocs.yml"))
    md = markdown.Markdown(extensions=mkdocs.markdown_extensions, extension_configs=mkdocs.mdx_configs)
    assert 'class="language-python highlight"' in md.convert("```python\nx = 1\n```\n")
    assert len(render_cache._state["memo"]) == 1


def test_search_entries_taken_from_the_cache_equal_a_fresh_parse(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import markdown
    from material.plugins.search.plugin import SearchIndex
    from mkdocs.structure.toc import get_toc

    from qkvsite.hooks import search

    monkeypatch.setattr(search, "CACHE", tmp_path)
    md = markdown.Markdown(extensions=["toc"])
    content = md.convert("# 注意力\n\n点积衡量相似度。\n\n## Softmax\n\nEvery row sums to 1.\n")
    page = SimpleNamespace(content=content, toc=get_toc(md.toc_tokens), url="dot-product/", title="注意力", meta={})
    settings = {"lang": ["zh"], "separator": r"[\s\-]", "pipeline": [], "fields": {}}
    fresh, cached = SearchIndex(**settings), SearchIndex(**settings)
    fresh.add_entry_from_context(page)
    search.cached_indexing(cached)
    cached.add_entry_from_context(page)  # parsed, then stored
    cached.add_entry_from_context(page)  # from the cache
    assert fresh.entries and cached.entries == fresh.entries * 2
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_a_build_with_no_search_entries_cached_loads_jiebas_dictionary_ahead_in_a_thread(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import jieba

    from qkvsite.hooks import search

    config = SimpleNamespace(plugins={})
    monkeypatch.setattr(search, "CACHE", tmp_path)
    (tmp_path / "entries.json").write_text("[]", encoding="utf-8")
    monkeypatch.setattr(search, "_jieba_loading", None)
    search.on_pre_build(config)
    assert search._jieba_loading is None  # a build that finds entries cached may need no segmenting at all
    (tmp_path / "entries.json").unlink()
    search.on_pre_build(config)
    search._jieba_loading.join(timeout=60)
    assert search._jieba_loading.name == "jieba" and jieba.dt.initialized


def test_chinese_text_is_segmented_by_jieba_once_then_read_from_the_cache(tmp_path, monkeypatch):
    from material.plugins.search.plugin import SearchIndex

    from qkvsite.hooks import search

    monkeypatch.setattr(search, "CACHE", tmp_path)
    text = "第 1 章的笔记本 点积衡量两个向量有多相似"
    segmented = search.segment(text)
    assert segmented == SearchIndex()._segment_chinese(text) != text  # jieba's words, spaced
    monkeypatch.setattr(SearchIndex, "_segment_chinese", lambda self, text: pytest.fail("segmented again"))
    assert search.segment(text) == segmented
