"""`pytest --collect-only` starts nothing in the background (tests/conftest.py): no build, no
server, no page loads."""

import subprocess
import sys

from tests.conftest import ROOT

# pytest in a fresh process, with a plugin that reports, once tests/conftest.py's
# pytest_collection_finish has run, what it started in the background (tests/conftest.py:
# Background) and how many selected tests need the site
RUN_AND_REPORT = """
import sys
import pytest

class Report:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection_finish(self, session):
        yield
        from tests.conftest import BACKGROUND
        background = session.config.stash.get(BACKGROUND, None)
        jobs = ("build", "server", "page_loads")
        started = [job for job in jobs if getattr(background, job, None) is not None]
        site_tests = sum(item.get_closest_marker("site") is not None for item in session.items)
        print(f"REPORT started={started} site_tests={site_tests}")

sys.exit(pytest.main(sys.argv[1:], plugins=[Report()]))
"""


def test_collect_only_starts_no_build_no_server_and_no_page_loads():
    # tests/site/test_browser.py holds tests that need the site, the server and every page's load:
    # running them starts all
    options = ["--collect-only", "-q", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [sys.executable, "-c", RUN_AND_REPORT, *options, "tests/site/test_browser.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (report,) = [line for line in result.stdout.splitlines() if line.startswith("REPORT ")]
    started, site_tests = report.removeprefix("REPORT started=").split(" site_tests=")
    assert int(site_tests) > 0, "nothing collected needs the site: this run proves nothing"
    assert started == "[]", f"--collect-only started {started}"
