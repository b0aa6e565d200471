"""A chapter made by `python -m qkvsite.new_chapter` passes, as written, every rule the tests hold a
chapter to (but the word minimum: its text is the author's to write), in a copy of the
repository."""

import os
import shutil
import subprocess
import sys

from tests.conftest import ROOT


def copy_of_the_repository(to):
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        if (ROOT / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, to / name)
    return to


def test_a_new_chapter_passes_the_skeleton_parity_notation_and_page_block_tests(tmp_path):
    root = copy_of_the_repository(tmp_path / "repo")
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    made = subprocess.run(
        [sys.executable, "-m", "qkvsite.new_chapter", "demo-chapter", "A demo", "演示"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    assert "docs/demo-chapter.zh.md" in made.stdout and "mkdocs.yml" in made.stdout
    tests = [
        "docs/demo-chapter.en.md",
        "docs/demo-chapter.zh.md",
        "tests/examples/test_demo_chapter.py",
        "tests/content/test_chapter_skeleton.py",
        "tests/content/test_i18n.py",
        "tests/content/test_notation.py",
        "tests/content/test_math.py",
        "tests/content/test_chinese.py",
        "tests/content/test_shape_comments.py",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not site", *tests]
        # the tests of the new chapter's pages, blocks and snippets, as CONTRIBUTING's loop selects
        + ["--chapter", "demo-chapter", "-k", "demo"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    summary = run.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary, run.stdout[-4000:]
