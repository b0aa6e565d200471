"""`pytest --collect-only` starts nothing in the background (tests/conftest.py): no build, no
server, no page loads."""

import subprocess
import sys

import pytest

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


def collected(*options: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """The content checks that run examples, as pytest collects them with ``options``."""
    files = ["tests/content/test_shape_comments.py", "tests/content/test_captions.py"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + [*options, *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result, [line for line in result.stdout.splitlines() if "::" in line]


SHAPES = (
    "::test_every_shape_comment_states_the_tensors_real_shape[",
    "::test_swapping_two_symbols_in_any_shape_comment_of_a_snippet_is_caught[",
)
CAPTIONS = "::test_every_number_and_trend_in_a_caption_is_stated_from_the_figures_values["


def example_of(test: str) -> str | None:
    """The example a collected check runs (a snippet's path, or a figure's example), or None."""
    from qkvsite.figure_cache import declared

    param = test.split("[", 1)[-1][:-1]
    if any(check in test for check in SHAPES):
        return param
    return declared()[param][0] if CAPTIONS in test else None


def test_chapter_keeps_the_example_checks_of_examples_that_use_its_snippets_and_all_others():
    from qkvsite.figure_cache import SNIPPETS, snippet_sources

    _, everything = collected()
    result, kept = collected("--chapter", "qkv")
    assert result.returncode == 0, result.stdout + result.stderr

    def wanted(test: str) -> bool:
        example = example_of(test)
        return example is None or any(
            SNIPPETS / "qkv" in path.parents for path in snippet_sources(example)
        )

    assert kept == [test for test in everything if wanted(test)]
    names = {test.split("[")[1][:-1] for test in kept if example_of(test)}
    assert {"qkv/projections.py", "qkv-projections"} <= names
    assert not {"learned_attention/reversal.py", "learned-before-after"} & names
    assert len(kept) < len(everything)


def test_chapter_names_a_folder_of_snippets():
    from tests.conftest import uses_chapter

    with pytest.raises(pytest.UsageError, match="there is no snippets/no_such_chapter/"):
        uses_chapter(None, "no-such-chapter")
