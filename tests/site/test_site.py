"""The site as a whole: strict build, every rendered block tested, figures computed, CI config."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import torch
import yaml

from qkvsite import config
from qkvsite.config import DOCS, ROOT, source_pages
from qkvsite.dialect import Page
from qkvsite.figures import load_all, run_example

LABEL_CONT = {"zh": "接上一段运行", "en": "continues the block above"}


def lang_of(page) -> str:
    return config.language_of(page)


def html_of(site, page):
    """The built HTML of docs/<name>.<lang>.md."""
    url = config.page_url(config.page_name(page), lang_of(page))
    return (site / url / "index.html").read_text(encoding="utf-8")


def test_strict_build_succeeds(site):
    assert (site / "index.html").is_file()


def test_a_builds_output_holds_only_mkdocs_log_lines(build_output):
    # kernels, workers and libraries write lines of their own (ipykernel's warnings, torch's
    # profiler log, jieba's dictionary loading): a build keeps them out of its output
    stray = [
        line
        for line in build_output.splitlines()
        if line.strip() and not re.match(r"(DEBUG|INFO)\s+-  ", line)
    ]
    assert stray == [], "\n".join(stray[:10])


@pytest.mark.parametrize("page", source_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_rendered_python_block_is_collected_and_run(site, page):
    rendered = len(re.findall(r'<div class="language-python[ "]', html_of(site, page)))
    assert rendered == len(Page(page).blocks)


@pytest.mark.parametrize("page", source_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_python_comes_only_from_snippets(page):
    fences = re.findall(
        r"^```(?:python|py)\b[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S
    )
    for body in fences:
        lines = [line for line in body.splitlines() if line.strip()]
        assert lines and all(re.match(r'--8<-- "snippets/', line) for line in lines), body


@pytest.mark.parametrize("page", source_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_continuations_are_labelled_on_the_page(site, page):
    continuing = sum(block.continues for block in Page(page).blocks)
    titles = [
        re.sub(r"<[^>]+>", "", t)
        for t in re.findall(r'<span class="filename">(.*?)</span>', html_of(site, page))
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


def test_a_build_that_finds_every_figure_cached_draws_none_and_does_not_import_matplotlib(
    site, monkeypatch
):
    from qkvsite import figure_cache
    from tests.conftest import BUILT_SITE

    if BUILT_SITE:
        pytest.skip("a site built before the tests: its cache is not this test's to read")
    for module in ["matplotlib", "qkvsite.figures"]:
        monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    # the build behind `site` drew and cached every figure
    drawings = figure_cache.Drawings(config.languages())
    assert drawings.missing() == []
    for name in drawings.figures:
        for lang in config.languages():
            assert all(
                drawings.svg(name, lang, scheme).startswith(b"<?xml")
                for scheme in figure_cache.SCHEMES
            )


def test_the_figures_read_from_the_modules_source_are_those_the_modules_register():
    from qkvsite import figure_cache

    spec = {
        name: (spec.example, spec.module_file, spec.measured) for name, spec in load_all().items()
    }
    assert figure_cache.declared() == spec


def test_a_figure_declared_twice_is_an_error(tmp_path, monkeypatch):
    from qkvsite import figure_cache

    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text(
            '@figure("same", "dot_product/two_vectors.py")\ndef f(ns, lang): ...\n'
        )
    monkeypatch.setattr(figure_cache, "MODULES", tmp_path)
    with pytest.raises(ValueError, match="'same' is declared twice"):
        figure_cache.declared()


HEX = re.compile(r"#[0-9a-f]{6}\b")


@pytest.mark.parametrize("prefix", ["", "en/"])
def test_both_schemes_of_a_figure_are_one_drawing_in_each_schemes_colours(site, prefix):
    from qkvsite.figures import PLACEHOLDERS

    for name in load_all():
        light = (site / f"{prefix}figures/{name}.svg").read_text(encoding="utf-8")
        dark = (site / f"{prefix}figures/{name}.dark.svg").read_text(encoding="utf-8")
        assert not any(p in light or p in dark for p in PLACEHOLDERS.values()), (
            f"{name}: a placeholder colour left"
        )
        assert HEX.sub("#", light) == HEX.sub("#", dark), (
            f"{name}: the schemes differ in more than colours"
        )
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

    figures.FIGURES["raster-test"] = figures.Figure(
        "raster-test", "dot_product/two_vectors.py", bad_cells_in_paper
    )
    try:
        with pytest.raises(ValueError, match="raster-test.*inside a raster image"):
            figures.draw_one("raster-test", "en")
    finally:
        del figures.FIGURES["raster-test"]


def test_every_figure_is_used_and_none_is_committed():
    for lang in ["zh", "en"]:
        text = "\n".join(
            p.read_text(encoding="utf-8") for p in source_pages() if lang_of(p) == lang
        )
        for name in load_all():
            assert f"](figures/{name}.svg)" in text, (
                f"figure {name} is drawn but no {lang} page shows it"
            )
    tracked = subprocess.run(
        ["git", "ls-files", "docs"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    assert not re.search(r"\.(svg|png|jpe?g|gif)$", tracked, re.M), tracked


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="checks the failure on a machine without CUDA"
)
def test_require_cuda_fails_without_cuda():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "tests/examples/test_dot_product.py",
        ],
        cwd=ROOT,
        env={**os.environ, "REQUIRE_CUDA": "1"},
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "REQUIRE_CUDA=1 but torch.cuda.is_available() is False" in result.stdout + result.stderr


def test_the_gpu_check_rehearsal_runs_the_rule_with_the_cpu_as_the_device(
    pytestconfig, monkeypatch
):
    from qkvsite.pytest_plugin import gpu_rule, pytest_configure, pytest_report_header

    monkeypatch.setenv("REQUIRE_CUDA", "1")
    monkeypatch.setenv("QKV_RULE_DEVICE", "cpu")  # what .ci/gpu-check --rehearse sets
    pytest_configure(pytestconfig)  # no UsageError: CUDA is not required
    assert gpu_rule() == "cpu"
    assert "every page block must compute on cpu" in pytest_report_header(pytestconfig)[0]
    assert (
        "--rehearse" in (ROOT / ".ci" / "gpu-check").read_text()
        and "QKV_RULE_DEVICE=cpu" in (ROOT / ".ci" / "gpu-check").read_text()
    )


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
    assert pages["needs"] == ["cpu", "torch-versions", "other-platforms"]
    assert deploy["needs"] == "pages"
    for job in (pages, deploy):
        assert job["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    build = next(step for step in pages["steps"] if step.get("run") == "make build")
    assert build["env"]["SITE_URL"] == "${{ steps.pages.outputs.base_url }}/"
    assert "github.repository" in build["env"]["REPO_URL"]
    assert deploy["concurrency"]["cancel-in-progress"] is False
    assert "pull_request" in triggers(ci)  # the tests themselves run on pull requests


def test_the_pages_job_tests_the_very_directory_it_uploads_for_deploy():
    steps = workflow("ci.yml")["jobs"]["pages"]["steps"]
    build = next(i for i, step in enumerate(steps) if step.get("run") == "make build")
    tests = next(i for i, step in enumerate(steps) if "pytest" in step.get("run", ""))
    upload = next(
        i for i, step in enumerate(steps) if "upload-pages-artifact" in step.get("uses", "")
    )
    assert build < tests < upload
    assert steps[tests]["env"]["QKV_SITE_DIR"] == steps[upload]["with"]["path"] == "site"
    for name in ("SITE_URL", "REPO_URL"):  # the tests expect what the site was built with
        assert steps[tests]["env"][name] == steps[build]["env"][name]


def test_a_scheduled_or_manual_run_cannot_cancel_a_push_run_and_colab_waits_for_the_deploy():
    ci = workflow("ci.yml")
    assert {"schedule", "workflow_dispatch", "push"} <= set(triggers(ci))
    # one concurrency group per event and ref: a push run to main shares it with no scheduled or
    # manual run
    assert (
        "${{ github.event_name }}" in ci["concurrency"]["group"]
        and "${{ github.ref }}" in ci["concurrency"]["group"]
    )
    assert ci["concurrency"]["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    colab = ci["jobs"]["colab"]
    assert "deploy" in colab["needs"] and colab["permissions"] == {"contents": "write"}


def test_the_published_site_cites_the_records_of_the_commit_it_was_built_from():
    ci = workflow("ci.yml")
    uploads = {
        name: step["with"]["name"]
        for name, job in ci["jobs"].items()
        for step in job["steps"]
        if "upload-artifact" in step.get("uses", "") and "verification" in step["with"]["path"]
    }
    # the records of every job that runs page blocks, the other platforms' too
    assert set(uploads) == {"cpu", "torch-versions", "other-platforms"}
    assert set(uploads) <= set(ci["jobs"]["pages"]["needs"])
    steps = ci["jobs"]["pages"]["steps"]
    download = next(
        i for i, step in enumerate(steps) if "download-artifact" in step.get("uses", "")
    )
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
                assert job["permissions"] == {"contents": "write"} and job["needs"] == [
                    "pages",
                    "deploy",
                ]
            else:
                assert not writes, f"{path.name}: {name} writes {writes}"


def test_python_passes_ruff():
    ruff = shutil.which("ruff", path=os.path.dirname(sys.executable))
    assert ruff, "ruff is not installed (requirements.txt)"
    result = subprocess.run(
        [ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_python_is_formatted_by_ruff_at_100_columns():
    ruff = shutil.which("ruff", path=os.path.dirname(sys.executable))
    result = subprocess.run(
        [ruff, "format", "--check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
