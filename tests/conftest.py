"""Fixtures shared by the unit tests."""

import contextlib
import io
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def run_snippet(path: str, stdout=None) -> dict:
    """Run snippets/<path> as a script and return its variables; what it prints goes to ``stdout``."""
    with contextlib.redirect_stdout(stdout or io.StringIO()):
        return runpy.run_path(str(ROOT / "snippets" / path), run_name="__main__")


@pytest.fixture(params=DEVICES)
def device(request):
    """Every device this machine has; with REQUIRE_CUDA=1 that includes cuda."""
    return request.param


@pytest.fixture(params=[torch.float32, torch.float64], ids=["float32", "float64"])
def dtype(request):
    return request.param


# The test build is published the way GitHub Pages publishes a project: under a sub-path of its host.
SUBPATH = "/qkv/"
SITE_URL = f"https://readers.example{SUBPATH}"
REPO_URL = "https://github.com/qkv-example/qkv"


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The site built with `mkdocs build --strict`, as the Pages workflow builds it (SITE_URL, REPO_URL)."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": SITE_URL, "REPO_URL": REPO_URL}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # MkDocs' own warnings (--strict already fails on them); kernels started for notebooks log other WARNINGs
    assert not re.search(r"^WARNING\s+-", result.stderr, re.M), result.stderr
    return out


def pytest_collection_modifyitems(config, items):
    """Tests that need the built site carry the `site` marker: `pytest -m "not site"` builds nothing.

    The tests that read the browser's load of every page (``visits``, tests/test_browser.py) run last: the loads
    run in the background from the first browser test on, while the other tests run.
    """
    for item in items:
        if "site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.site)
    reads_visits = lambda item: "visits" in getattr(item, "fixturenames", ())  # noqa: E731
    items[:] = [item for item in items if not reads_visits(item)] + [item for item in items if reads_visits(item)]
