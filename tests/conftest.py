"""Fixtures shared by the unit tests."""

import contextlib
import io
import os
import re
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def run_snippet(path: str, stdout=None) -> dict:
    """Run snippets/<path> as a script and return its variables; what it prints goes to
    ``stdout``."""
    with contextlib.redirect_stdout(stdout or io.StringIO()):
        return runpy.run_path(str(ROOT / "snippets" / path), run_name="__main__")


@pytest.fixture(params=DEVICES)
def device(request):
    """Every device this machine has; with REQUIRE_CUDA=1 that includes cuda."""
    return request.param


@pytest.fixture(params=[torch.float32, torch.float64], ids=["float32", "float64"])
def dtype(request):
    return request.param


# The test build is published the way GitHub Pages publishes a project: under a sub-path of its
# host. With QKV_SITE_DIR the tests read a site already built there (the Pages workflow tests the
# very directory it deploys), built with the SITE_URL and REPO_URL of the environment.
BUILT_SITE = os.environ.get("QKV_SITE_DIR")
SITE_URL = os.environ["SITE_URL"] if BUILT_SITE else "https://readers.example/qkv/"
REPO_URL = os.environ["REPO_URL"] if BUILT_SITE else "https://github.com/qkv-example/qkv"
SUBPATH = urlparse(SITE_URL).path.rstrip("/") + "/"  # "/qkv/"


class DrawnWhenAsked:
    """A stand-in for the prepare stage's worker pool (``qkvsite.workers.pool``): each job runs in
    this process, only when its result is asked for (a figure that a notebook reads before then was
    not drawn by the workers); ``jobs`` keeps every job it was handed."""

    def __init__(self):
        self.jobs = []

    def __enter__(self):
        return self

    def __exit__(self, *error):
        return False

    def apply_async(self, function, args):
        self.jobs.append(args)
        return type("Later", (), {"get": lambda _: function(*args)})()


def dies_with_its_parent() -> None:
    """In a child process, before it runs (``preexec_fn``): on Linux, the kernel sends it SIGTERM
    when the process that started it dies, however that dies (a pytest killed by CI's timeout, say).
    The build's own kernels and workers then exit with it."""
    if sys.platform == "linux":
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def remove_sites_of_ended_runs(under: Path) -> list[Path]:
    """Remove the site directories (``SiteBuild``) under ``under`` whose test run has ended without
    removing its own (a SIGTERM or SIGKILL ends pytest at once, so its cleanups never run): each is
    named after its run's process."""
    removed = []
    if os.name != "posix":
        return removed  # os.kill(pid, 0) looks a process up on POSIX only
    for directory in under.glob("qkv-site-*-*"):
        pid = directory.name.split("-")[2]
        if pid.isdigit() and not process_exists(int(pid)):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: nothing is sent, the process is only looked up
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


class SiteBuild:
    """`mkdocs build --strict` of the site in a subprocess, as the Pages workflow builds it
    (SITE_URL, REPO_URL).

    Started as soon as the selected tests are known (``pytest_collection_finish``): the tests
    that do not need the site run while it builds. ``wait`` returns the site's directory once it
    is built, from any thread.
    """

    def __init__(self):
        remove_sites_of_ended_runs(Path(tempfile.gettempdir()))
        self.directory = Path(tempfile.mkdtemp(prefix=f"qkv-site-{os.getpid()}-"))
        # a pipe can fill up
        self.stdout, self.stderr = (tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+"))
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": SITE_URL, "REPO_URL": REPO_URL}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mkdocs",
                "build",
                "--strict",
                "--site-dir",
                str(self.directory),
            ],
            cwd=ROOT,
            env=env,
            stdout=self.stdout,
            stderr=self.stderr,
            text=True,
            preexec_fn=dies_with_its_parent,
        )
        self.lock = threading.Lock()
        self.failure = self.output = None

    def wait(self) -> Path:
        with self.lock:
            if self.process.returncode is None:
                self.process.wait()
                self.stdout.seek(0)
                self.stderr.seek(0)
                out, err = self.stdout.read(), self.stderr.read()
                self.output = err  # MkDocs logs to stderr
                if self.process.returncode != 0:
                    self.failure = f"mkdocs build failed ({self.process.returncode}):\n{out}{err}"
                # MkDocs' own warnings (--strict already fails on them); kernels started for
                # notebooks log others
                elif re.search(r"^WARNING\s+-", err, re.M):
                    self.failure = f"mkdocs build warned:\n{err}"
        if self.failure:
            pytest.fail(self.failure, pytrace=False)
        return self.directory

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


class BuiltSite:
    """A site built before the tests (QKV_SITE_DIR): read as it is, never deleted."""

    output = None  # not built here: its build's output is not known

    def __init__(self, directory: str):
        self.directory = Path(directory).resolve()
        if not (self.directory / "index.html").is_file():
            raise pytest.UsageError(f"QKV_SITE_DIR={directory} holds no built site")

    def wait(self) -> Path:
        return self.directory

    def close(self):
        pass


class Background:
    """What runs beside the tests: the build, the server of the built site, the browser's page
    loads.

    Each starts once, when the selected tests are known (``pytest_collection_finish``), or when a
    fixture first asks for it.
    """

    def __init__(self, config):
        self.config = config
        self.build = self.server = self.page_loads = None

    def start_build(self):
        if self.build is None:
            self.build = BuiltSite(BUILT_SITE) if BUILT_SITE else SiteBuild()
            self.config.add_cleanup(self.build.close)
        return self.build

    def start_server(self):
        if self.server is None:
            from tests.site.browsing import Server

            self.server = Server(self.start_build().directory)
            self.config.add_cleanup(self.server.close)
        return self.server

    def start_page_loads(self):
        if self.page_loads is None:
            from tests.site.browsing import PageLoads

            self.page_loads = PageLoads(self.start_build(), self.start_server().origin)
            self.config.add_cleanup(self.page_loads.close)
        return self.page_loads


BACKGROUND = pytest.StashKey[Background]()


def background(config) -> Background:
    return config.stash.setdefault(BACKGROUND, Background(config))


def reads_visits(item) -> bool:
    return "visits" in getattr(item, "fixturenames", ())


def needs_build(item) -> bool:
    return bool(SITE_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_collection_finish(session):
    """Starts the build if a selected test needs the site, and the page loads if one reads them.

    Under ``--collect-only`` nothing starts: no test runs to need them.
    """
    if session.config.option.collectonly:
        return
    if any(needs_build(item) for item in session.items):
        background(session.config).start_build()
    if any(reads_visits(item) for item in session.items):
        background(session.config).start_page_loads()


@pytest.fixture(scope="session")
def site(request) -> Path:
    """The built site's directory (``SiteBuild``, started with the session)."""
    return background(request.config).start_build().wait()


@pytest.fixture(scope="session")
def build_output(request, site) -> str:
    """What the session's build wrote to stderr, where MkDocs logs (skips a site built before the
    tests)."""
    output = background(request.config).build.output
    if output is None:
        pytest.skip("the site was built before the tests (QKV_SITE_DIR): its output is not here")
    return output


@pytest.fixture(scope="session")
def server(request, site) -> str:
    """Where the site is served (tests/site/browsing.py), without the sub-path:
    http://127.0.0.1:<port>."""
    return background(request.config).start_server().url


@pytest.fixture(scope="session")
def origin(server):
    """Where the site is served: the host and the project's sub-path (no trailing slash)."""
    return server + SUBPATH.rstrip("/")


@pytest.fixture(scope="session")
def page_loads(request, site):
    """Every page's load in headless Chromium (tests/site/browsing.py: ``PageLoads``), started with
    the build."""
    return background(request.config).start_page_loads()


SITE_FIXTURES = {"site", "server", "origin", "page_loads"}
# Headless Chromium (tests/site/test_browser.py), which the axe checks also need axe-core for
# (node_modules/, from npm): a test that takes it is a `site` test too, so that `-m "not site"`
# needs neither; it starts no build by itself.
BROWSER_FIXTURES = {"browser"}


def pytest_collection_modifyitems(config, items):
    """Tests that need the built site, or the browser, carry the `site` marker: `pytest -m "not
    site"` builds nothing and needs neither Chromium nor node_modules/.  The tests that do not need
    the site run first, while it builds; the tests that read the browser's load of every page
    (``visits``, tests/site/test_browser.py) run last: the loads run in the background once the site
    is built, beside the other tests."""
    for item in items:
        if (SITE_FIXTURES | BROWSER_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.site)
    # only the tests of that built site: not the unit tests, nor the build layer's (test_build.py)
    if BUILT_SITE:
        uses_it = lambda item: (  # noqa: E731
            (SITE_FIXTURES | BROWSER_FIXTURES) & set(getattr(item, "fixturenames", ()))
            and item.path.name != "test_build.py"
        )
        config.hook.pytest_deselected(items=[item for item in items if not uses_it(item)])
        items[:] = [item for item in items if uses_it(item)]
    if chapter := config.getoption("--chapter"):
        keep = [item for item in items if uses_chapter(item, chapter)]
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep
    needs_site = lambda item: item.get_closest_marker("site") is not None  # noqa: E731
    items[:] = (
        [item for item in items if not needs_site(item)]
        + [item for item in items if needs_site(item) and not reads_visits(item)]
        + [item for item in items if reads_visits(item)]
    )


def uses_chapter(item, chapter: str) -> bool:
    """``--chapter``: a test marked ``example(path)`` is kept only if that example, or a snippets
    module it imports, is in the chapter's folder of snippets/; every other test is kept."""
    from qkvsite.figure_cache import SNIPPETS, snippet_sources

    folder = SNIPPETS / chapter.replace("-", "_")
    if not folder.is_dir():
        raise pytest.UsageError(f"--chapter {chapter}: there is no snippets/{folder.name}/")
    mark = item.get_closest_marker("example")
    return mark is None or any(folder in path.parents for path in snippet_sources(mark.args[0]))


def stop_now(signum, frame):
    sys.stderr.write("\nKeyboardInterrupt: the test run stopped.\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def pytest_sessionstart(session):
    """Ctrl-C ends a test run at once, as SIGTERM does, instead of after pytest's orderly exit (its
    traceback, every fixture's teardown, torch's finalisers: 6-8 s on 2 cores). What runs in the
    background dies with the run (``dies_with_its_parent``), and the next run removes the site
    directory it leaves (``remove_sites_of_ended_runs``)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, stop_now)


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium for the tests that load pages (tests/site/browsing.py: ``launch``): one
    for the session, since Playwright's sync API allows one at a time in a thread."""
    from playwright import sync_api as playwright

    from tests.site.browsing import launch

    with playwright.sync_playwright() as p:
        chromium = launch(p)
        yield chromium
        chromium.close()
