"""The build layer: a damaged entry of every cache rebuilt by the next build, no process left
behind, layers that import downward only, and settings read afresh when mkdocs.yml changes."""

import ast
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from qkvsite import cache as cache_module
from qkvsite import config
from tests.conftest import (
    REPO_URL,
    ROOT,
    SITE_URL,
    DrawnWhenAsked,
    dies_with_its_parent,
    remove_sites_of_ended_runs,
)

# --- every cache of a real build: a damaged entry is rebuilt, and the site is the same ---


@pytest.fixture
def build(request):
    """Start ``mkdocs build`` of the site into a directory, as the session's build (SITE_URL,
    REPO_URL); a build still running when the test ends is killed."""
    started = []

    def start(site_dir: Path, **env) -> subprocess.Popen:
        env = {
            **os.environ,
            "NO_MKDOCS_2_WARNING": "1",
            "SITE_URL": SITE_URL,
            "REPO_URL": REPO_URL,
            **env,
        }
        command = [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-q",
            "--site-dir",
            str(site_dir),
        ]
        out = subprocess.PIPE
        started.append(
            subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                preexec_fn=dies_with_its_parent,
            )
        )
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_a_damaged_entry_of_every_cache_is_rebuilt_by_the_next_build_and_the_site_is_the_same(
    site, build, tmp_path
):
    # `site` first: its build filled every cache (the same SITE_URL and REPO_URL as here)
    from qkvsite import cards, figure_cache, notebook_runs, notebooks
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
        "notebook run": notebook_runs.RUNS.path(
            notebook_runs.run_key([notebook_runs.strip_comment(code[0]), *code[1:]])
        ),
        "rendered notebook page": sorted(hook.rendered_pages(lang).glob("*.json"))[0],
    }
    originals = {what: path.read_bytes() for what, path in damaged.items()}
    for what, raw in originals.items():
        damage = (
            raw[: len(raw) // 2]
            if what != "rendered notebook page"
            else raw.replace(b"<div", b"<p", 1)
        )
        damaged[what].write_bytes(damage)
    rebuilt = build(tmp_path / "site")
    output, _ = rebuilt.communicate(timeout=300)
    assert rebuilt.returncode == 0, output
    assert "Error" not in output, output
    # made again, as they were (all of them are deterministic)
    for what, path in damaged.items():
        assert path.is_file() and path.read_bytes() == originals[what], what
    for page in [
        "figures/similarity-matrix.svg",
        f"cards/{chapter}.png",
        "index.html",
        f"{chapter}/index.html",
    ]:
        assert (tmp_path / "site" / page).read_bytes() == (site / page).read_bytes(), page
    for page in [f"notebooks/{chapter}/index.html", f"notebooks/{chapter}/{chapter}.ipynb"]:
        assert (tmp_path / "site" / page).read_bytes() == (site / page).read_bytes(), page
    assert cache_module.check_directory(hook.rendered_pages(lang), hook.made_by()) == []


def test_only_a_figure_of_measured_times_or_memory_is_drawn_again_on_another_machine(monkeypatch):
    from qkvsite import figure_cache

    here = figure_cache.Drawings(config.languages()).keys
    monkeypatch.setattr(figure_cache, "measuring_machine", lambda: "another processor cpu")
    elsewhere = figure_cache.Drawings(config.languages()).keys
    measured = {name for name, (_, _, measured) in figure_cache.declared().items() if measured}
    assert {drawing[0] for drawing, key in here.items() if elsewhere[drawing] != key} == measured
    assert measured == {
        "decoding-kv-cache-speed",
        "faq-attention-cost",
        "faq-score-memory",
        "fast-attention-memory",
    }


def test_the_prepare_stage_hands_a_missing_widget_to_the_workers_the_pages_then_read_it(
    site, monkeypatch
):
    # `site` first: its build filled every cache; one widget's data is taken out of it
    from qkvsite import prepare, widgets
    from qkvsite.hooks.widgets import json_path

    name, example = next(iter(widgets.declared().items()))
    langs = config.languages()
    for lang in langs:
        widgets.CACHE.path(widgets.widget_key(name, example, lang)).unlink()
    assert widgets.missing(langs) == [(name, lang) for lang in langs]
    pool = DrawnWhenAsked()
    monkeypatch.setattr(prepare.workers, "pool", lambda: pool)
    prepare.prepare(SITE_URL, REPO_URL, [])
    # one job, both languages: one run of the example
    assert pool.jobs == [("qkvsite.widgets", "make", [(name, lang) for lang in langs])]
    assert widgets.missing(langs) == []  # the pages read it from the cache
    for lang in langs:
        served = (site / json_path(name, lang)).read_bytes()
        assert widgets.CACHE.get(widgets.widget_key(name, example, lang)) == served


# --- nothing left running ---


def marked(mark: str) -> list[tuple[int, str]]:
    """The processes whose environment holds ``mark``, with their command lines."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and mark.encode() in (proc / "environ").read_bytes():
                found.append(
                    (int(proc.name), (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
                )
        except OSError:
            pass  # gone meanwhile, or not ours to read
    return found


STOPS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}


@dataclass
class Stopped:
    """What a stopped run did: its exit status, the seconds from its signal to its end, and the
    processes that still carried its mark 5 s later."""

    returncode: int
    seconds: float
    left: list


def stop_when(runs: dict) -> dict[str, Stopped]:
    """Send each run (mark -> (signal name, process, moment)) its signal as soon as ``moment``, a
    function of the command lines of the processes that carry its mark, holds. The runs go side by
    side; each is given 300 s to reach its moment (a cold build under load is slow to start)."""
    deadline = time.time() + 300
    signalled, ended, stopped = {}, {}, {}
    while len(stopped) < len(runs):
        for mark, (stop, process, moment) in runs.items():
            if mark not in signalled:
                if moment([line for _, line in marked(mark)]):
                    process.send_signal(STOPS[stop])
                    signalled[mark] = time.time()
                else:
                    assert process.poll() is None, (
                        f"{stop}: the run ended before the moment it was to be stopped at"
                    )
            elif mark not in ended and process.poll() is not None:
                ended[mark] = time.time()
            elif mark in ended and mark not in stopped:
                if not marked(mark) or time.time() > ended[mark] + 5:
                    seconds = ended[mark] - signalled[mark]
                    stopped[mark] = Stopped(process.returncode, seconds, marked(mark))
        assert time.time() < deadline, (
            f"not stopped and gone after 300 s: {len(signalled)} signalled, {len(ended)} ended"
        )
        time.sleep(0.05)
    return stopped


class Moment:
    """When a build is stopped: once a process of its kind runs (for ``after`` seconds), or once
    the build writes pages."""

    def __init__(self, process: str = "", after: float = 0.0, pages: Path | None = None):
        self.process, self.after, self.pages, self.seen = process, after, pages, None

    def __call__(self, lines: list[str]) -> bool:
        if self.pages is not None:
            return any(self.pages.rglob("index.html"))
        if self.seen is None and any(self.process in line for line in lines):
            self.seen = time.time()
        return self.seen is not None and time.time() >= self.seen + self.after


def entries_all_whole(cache: Path) -> bool:
    """Every entry a stopped build left in its cache reads back as written (none half-written)."""
    from qkvsite.cache import ENTRY, HEADER, _digest

    for path in cache.rglob("*"):
        if path.is_file() and ENTRY.fullmatch(path.name.split(".")[0]):
            head, _, data = path.read_bytes().partition(b"\n")
            if head != HEADER + _digest(data).encode():
                return False
    return True


@pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="reads processes from /proc (Linux)"
)
def test_a_build_stopped_at_any_moment_ends_within_2_s_non_zero_and_leaves_nothing(
    site, build, tmp_path
):
    # `site` first: its build warmed the project's cache, so a build with that cache soon renders
    # pages; the other builds have an empty cache of their own, so they start kernels and workers
    moments = {
        ("SIGTERM", "kernels starting"): lambda site_dir: Moment("ipykernel"),
        ("SIGTERM", "kernels running"): lambda site_dir: Moment("ipykernel", after=2),
        ("SIGTERM", "figures drawing"): lambda site_dir: Moment("multiprocessing", after=1),
        ("SIGTERM", "pages rendering"): lambda site_dir: Moment(pages=site_dir),
        ("SIGINT", "kernels running"): lambda site_dir: Moment("ipykernel", after=2),
        ("SIGINT", "pages rendering"): lambda site_dir: Moment(pages=site_dir),
    }
    runs, caches, labels = {}, {}, {}
    for (stop, when), moment in moments.items():
        mark = f"qkv-stop-test-{uuid.uuid4()}"
        where = tmp_path / f"{stop}-{when.replace(' ', '-')}"
        env = {"QKV_STOP_TEST": mark}
        if when != "pages rendering":
            env["QKV_CACHE_DIR"] = caches[mark] = str(where / "cache")
        runs[mark] = stop, build(where / "site", **env), moment(where / "site")
        labels[mark] = f"{stop} while {when}"
    stopped = stop_when(runs)
    for mark, what in labels.items():
        result = stopped[mark]
        assert result.returncode != 0, what
        assert result.seconds <= 2, (what, f"{result.seconds:.1f} s")
        assert result.left == [], what
        if mark in caches:
            assert entries_all_whole(Path(caches[mark])), what


@pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="reads processes from /proc (Linux)"
)
def test_a_pytest_stopped_by_sigterm_or_sigint_while_its_site_builds_ends_and_leaves_nothing(
    site, tmp_path
):
    # `site` first: each stopped run builds the site with a cache of its own, so its build starts
    # kernels and workers
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "tests/site/test_site.py::test_strict_build_succeeds",
    ]
    runs = {}
    try:
        for stop in STOPS:
            mark = f"qkv-stop-test-{uuid.uuid4()}"
            env = {
                **os.environ,
                "QKV_CACHE_DIR": str(tmp_path / stop / "cache"),
                "QKV_STOP_TEST": mark,
            }
            # the run that SIGTERM stops leaves the directory it built the site in
            env["TMPDIR"] = str(tmp_path)
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            runs[mark] = stop, process, Moment("ipykernel")
        stopped = stop_when(runs)
    finally:
        for _, process, _ in runs.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    for mark, (stop, _, _) in runs.items():
        assert stopped[mark].returncode != 0 and stopped[mark].seconds <= 2, stop
        assert stopped[mark].left == [], stop
    remove_sites_of_ended_runs(tmp_path)  # as the next run does
    assert list(tmp_path.glob("qkv-site-*")) == []


@pytest.mark.skipif(os.name != "posix", reason="looks processes up with os.kill(pid, 0)")
def test_the_next_run_removes_site_directories_of_runs_that_ended_without_cleanups_not_live_ones(
    tmp_path,
):
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    gone = tmp_path / f"qkv-site-{ended.stdout.strip()}-x1"  # its process has ended
    running = tmp_path / f"qkv-site-{os.getpid()}-x2"  # this one's
    other = tmp_path / "qkv-site-notes"  # not named after a process
    for directory in [gone, running, other]:
        (directory / "en").mkdir(parents=True)
    assert remove_sites_of_ended_runs(tmp_path) == [gone]
    assert sorted(tmp_path.iterdir()) == sorted([running, other])


# --- settings, layers, private names ---


def test_an_edited_nav_gives_the_new_chapter_list_and_notebook_nav_without_a_restart(
    tmp_path, monkeypatch
):
    from types import SimpleNamespace

    from qkvsite.hooks.chapters import add_notebook_nav

    # a copy of mkdocs.yml beside the project's directories (its relative paths made absolute)
    settings = tmp_path / "mkdocs.yml"
    text = config.MKDOCS_YML.read_text(encoding="utf-8")
    for relative in ("custom_dir: overrides", "  - snippets", "  - figures"):
        name = relative.split()[-1]
        text = text.replace(relative, relative.replace(name, str(ROOT / name)), 1)
    settings.write_text(f"docs_dir: {config.DOCS}\n{text}", encoding="utf-8")
    monkeypatch.setattr(config, "MKDOCS_YML", settings)
    before = config.chapters()
    settings.write_text(
        settings.read_text(encoding="utf-8").replace("      - learned-attention.md\n", ""),
        encoding="utf-8",
    )
    assert config.chapters() == [chapter for chapter in before if chapter != "learned-attention"]
    nav = SimpleNamespace(nav=[])
    add_notebook_nav(nav)
    assert nav.nav == [
        {config.NOTEBOOKS_SECTION: [f"notebooks/{chapter}.ipynb" for chapter in config.chapters()]}
    ]


def qkvsite_imports() -> dict[str, set[str]]:
    """Each module of qkvsite and the modules of qkvsite it imports, at its top or inside a
    function."""
    modules = {}
    for path in sorted((ROOT / "qkvsite").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        graph[name] = {each for each in found if each in modules and each != name}
    return graph


# the tooling in layers: the MkDocs plugin and its hooks on top; nothing below imports them
TOP = ("qkvsite.hooks", "qkvsite.plugin", "qkvsite.prepare")


def test_no_module_below_the_plugin_and_its_hooks_imports_them():
    graph = qkvsite_imports()
    below = {name: imported for name, imported in graph.items() if not name.startswith(TOP)}
    assert len(below) > 10 and "qkvsite.figures" in below
    assert {
        name: sorted(i for i in imported if i.startswith(TOP)) for name, imported in below.items()
    } == {name: [] for name in below}


def test_the_tooling_has_no_import_cycle():
    graph, state = qkvsite_imports(), {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "visiting"
        for imported in sorted(graph[name]):
            assert state.get(imported) != "visiting", " -> ".join([*path, name, imported])
            if imported not in state:
                visit(imported, [*path, name])
        state[name] = "done"

    for name in graph:
        if name not in state:
            visit(name, [])


def test_the_one_private_module_the_gpu_rule_imports_still_gives_torch_dispatch_mode():
    # qkvsite.devices imports TorchDispatchMode from torch.utils._python_dispatch (there is no
    # public path)
    import torch

    from qkvsite.devices import DeviceLog

    with DeviceLog() as log:
        torch.ones(2) * 2
    assert log.on("cpu") == 1, (
        "torch.utils._python_dispatch.TorchDispatchMode no longer sees ATen operations"
    )


def test_a_build_worker_computes_with_one_thread_and_writes_no_profiler_log():
    # the figure workers run the examples, one of which profiles memory: torch's Kineto would log
    # every profiler start and stop in the middle of the build's output
    from qkvsite import workers

    with workers.pool(1) as pool:
        names = ("OMP_NUM_THREADS", "KINETO_LOG_LEVEL")
        settings = [pool.apply(workers.call, ("os", "getenv", name)) for name in names]
    assert settings == ["1", "6"]
