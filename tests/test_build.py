"""The build layer: a damaged entry of every cache rebuilt by the next build, no process left behind, layers that
import downward only, and settings read afresh when mkdocs.yml changes."""

import ast
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from qkvsite import cache as cache_module
from qkvsite import config
from tests.conftest import REPO_URL, ROOT, SITE_URL

# --- every cache of a real build: a damaged entry is rebuilt, and the site is the same --------------------------


@pytest.fixture
def build(request):
    """Start ``mkdocs build`` of the site into a directory, as the session's build (SITE_URL, REPO_URL); a build
    still running when the test ends is killed."""
    started = []

    def start(site_dir: Path, **env) -> subprocess.Popen:
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": SITE_URL, "REPO_URL": REPO_URL, **env}
        command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(site_dir)]
        out = subprocess.PIPE
        started.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_a_damaged_entry_of_every_cache_is_rebuilt_by_the_next_build_and_the_site_is_the_same(site, build, tmp_path):
    # `site` first: its build filled every cache (the same SITE_URL and REPO_URL as here)
    from qkvsite import cards, figure_cache, notebooks
    from qkvsite.dialect import Page
    from qkvsite.hooks import notebooks as hook

    drawings = figure_cache.Drawings(config.languages())
    lang = config.default_language()
    chapter = config.chapters()[0]
    page = Page(config.DOCS / f"{chapter}.{lang}.md")
    code = notebooks.code_of(notebooks.chapter_notebook(page, chapter))
    damaged = {
        "figure": figure_cache.CACHE.path(drawings.keys["similarity-matrix", lang, "light"]),
        "card": cards.CACHE.path(cards.card_key(page.title, config.site_name(lang), lang)),
        "notebook run": notebooks.RUNS.path(notebooks.run_key([notebooks.strip_comment(code[0]), *code[1:]])),
        "compiled template": sorted(cache_module.JINJA.directory.iterdir())[0],
        "rendered notebook page": sorted(hook.rendered_pages(lang).glob("*.json"))[0],
    }
    for what, path in damaged.items():
        raw = path.read_bytes()
        path.write_bytes(raw[: len(raw) // 2] if what != "rendered notebook page" else raw.replace(b"<div", b"<p", 1))
    rebuilt = build(tmp_path / "site")
    output, _ = rebuilt.communicate(timeout=300)
    assert rebuilt.returncode == 0, output
    assert "Error" not in output, output
    for what, path in damaged.items():
        if what != "rendered notebook page":
            assert path.is_file() and path.read_bytes().startswith(cache_module.HEADER), what
    for page in ["figures/similarity-matrix.svg", f"cards/{chapter}.png", "index.html", f"{chapter}/index.html"]:
        assert (tmp_path / "site" / page).read_bytes() == (site / page).read_bytes(), page
    for page in [f"notebooks/{chapter}/index.html", f"notebooks/{chapter}/{chapter}.ipynb"]:
        assert (tmp_path / "site" / page).read_bytes() == (site / page).read_bytes(), page
    assert cache_module.check_directory(hook.rendered_pages(lang), hook.made_by()) == []


# --- nothing left running ---------------------------------------------------------------------------------------


def marked(mark: str) -> list[tuple[int, str]]:
    """The processes whose environment holds ``mark``, with their command lines."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and mark.encode() in (proc / "environ").read_bytes():
                found.append((int(proc.name), (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()))
        except OSError:
            pass  # gone meanwhile, or not ours to read
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads processes from /proc (Linux)")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_build_stopped_while_its_kernels_and_workers_run_leaves_no_process_after_5_s(site, build, tmp_path, stop):
    # `site` first: this build has a cache of its own, empty, so it starts kernels and workers; it is stopped
    # before it writes anything outside tmp_path
    mark = f"qkv-stop-test-{uuid.uuid4()}"
    running = build(tmp_path / "site", QKV_CACHE_DIR=str(tmp_path / "cache"), QKV_STOP_TEST=mark)
    deadline = time.time() + 120
    while not (
        any("ipykernel" in line for _, line in marked(mark))
        and any("multiprocessing" in line for _, line in marked(mark))
    ):
        assert running.poll() is None and time.time() < deadline, "no kernel and worker started"
        time.sleep(0.2)
    running.send_signal(stop)
    running.communicate(timeout=30)
    deadline = time.time() + 5
    while marked(mark) and time.time() < deadline:
        time.sleep(0.2)
    assert marked(mark) == []


# --- settings, layers, private names ----------------------------------------------------------------------------


def test_an_edited_nav_gives_the_new_chapter_list_and_notebook_nav_without_a_restart(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from qkvsite.hooks.chapters import add_notebook_nav

    settings = tmp_path / "mkdocs.yml"
    text = config.MKDOCS_YML.read_text(encoding="utf-8")
    settings.write_text(text, encoding="utf-8")
    monkeypatch.setattr(config, "MKDOCS_YML", settings)
    before = config.chapters()
    settings.write_text(text.replace("      - learned-attention.md\n", ""), encoding="utf-8")
    assert config.chapters() == [chapter for chapter in before if chapter != "learned-attention"]
    nav = SimpleNamespace(nav=[])
    add_notebook_nav(nav)
    assert nav.nav == [{config.NOTEBOOKS_SECTION: [f"notebooks/{chapter}.ipynb" for chapter in config.chapters()]}]


# the tooling in layers: a lower module never imports a higher one (the MkDocs plugin and its hooks are the top)
LOWER = ["cache", "config", "dialect", "records", "devices", "highlight", "figure_cache", "cards", "workers"]
LOWER += ["notebooks", "pytest_plugin", "figures/__init__"]
HIGHER = ("qkvsite.hooks", "qkvsite.plugin")


@pytest.mark.parametrize("module", LOWER)
def test_a_lower_module_imports_no_hook_and_not_the_plugin(module):
    tree = ast.parse((ROOT / "qkvsite" / f"{module}.py").read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    assert not [name for name in imported if name.startswith(HIGHER)]


def test_the_one_private_module_the_gpu_rule_imports_still_gives_torch_dispatch_mode():
    # qkvsite.devices imports TorchDispatchMode from torch.utils._python_dispatch (there is no public path)
    import torch

    from qkvsite.devices import DeviceLog

    with DeviceLog() as log:
        torch.ones(2) * 2
    assert log.on("cpu") == 1, "torch.utils._python_dispatch.TorchDispatchMode no longer sees ATen operations"
