"""The footer and the Verification page claim only what a record proves about the pages as they are
now."""

import copy
import shutil
import subprocess

from qkvsite import records
from qkvsite.hooks.verification import claim, table
from tests.conftest import ROOT

CURRENT = {"digest": "0123456789abcdef", "blocks": 10}


def record(device="cpu", torch="2.13.0", passed=10, failed=0, skipped=0, pages=CURRENT):
    rec = {
        "date": "2026-12-01T00:00:00Z",
        "runner": "local",
        "commit": "a" * 40,
        "clean": True,
        "device": device,
        "torch": torch,
        "python": "3.11.7",
        "cuda": {"device": "NVIDIA H200", "version": "12.8"} if device == "cuda" else None,
        "cpu": "AMD EPYC",
        "cpu_capability": "avx2",
        "threads": 2,
        "page_blocks": {"passed": passed, "failed": failed, "skipped": skipped},
    }
    if pages is not None:
        rec["pages"] = copy.deepcopy(pages)
    return rec


def footer(recs, lang="en"):
    return claim(lang, recs, CURRENT)["text"]


def test_a_complete_passing_run_of_the_current_pages_is_claimed():
    assert footer([record()]) == (
        "Every code block has run on CPU with its output checked: torch 2.13.0; GPU (CUDA): not "
        "yet run."
    )


def test_a_run_of_an_earlier_version_of_the_pages_is_not_claimed():
    earlier = record(pages={"digest": "fedcba9876543210", "blocks": 10})
    assert footer([earlier]).startswith("CPU: not yet run on the current version of the code;")
    assert footer([earlier], "zh").startswith("CPU：尚未在当前版本的代码上运行")


def test_a_run_of_some_pages_only_is_not_claimed():
    assert not records.proves(record(passed=3), CURRENT)
    assert footer([record(passed=3)]).startswith("CPU: not yet run")


def test_a_run_with_a_failed_block_is_not_claimed():
    assert not records.proves(record(passed=9, failed=1), CURRENT)


def test_a_record_without_a_fingerprint_proves_nothing():
    assert not records.proves(record(pages=None), CURRENT)


def test_an_old_torch_that_skipped_the_newer_blocks_is_claimed_apart():
    recs = [record(), record(torch="2.1.2", passed=8, skipped=2)]
    assert footer(recs).startswith(
        "Every code block has run on CPU with its output checked: torch 2.13.0 (on torch 2.1.2 "
        "too, except the blocks labelled with a newer torch);"
    )


def test_a_gpu_record_of_the_current_pages_is_claimed():
    assert footer([record(), record(device="cuda", torch="2.13.0+cu128")]).endswith(
        "GPU (CUDA) with its output checked: torch 2.13.0."
    )


def test_the_page_marks_which_records_ran_the_current_code():
    earlier = record(torch="2.1.2", pages={"digest": "fedcba9876543210", "blocks": 9})
    rows = table("en", [record(), earlier], CURRENT, "https://github.com/o/r").splitlines()[2:]
    assert "| yes |" in rows[0] and "| no (an earlier version) |" in rows[1]


def test_the_fingerprint_follows_how_blocks_run_and_what_they_are_checked_against_not_prose(
    tmp_path,
):
    page = tmp_path / "page.en.md"

    def fingerprint(text):
        page.write_text(text, encoding="utf-8")
        return records.fingerprint([page])

    base = (
        "Prose.\n\n```python\nprint(1)\n```\n\n"
        "<!--pytest-codeblocks:expected-output-->\n```text\n1\n```\n"
    )
    first = fingerprint(base)
    assert first["blocks"] == 1
    assert fingerprint(base.replace("Prose.", "Other prose.")) == first
    assert fingerprint(base.replace("print(1)", "print(2)"))["digest"] != first["digest"]
    assert fingerprint(base.replace("```text\n1", "```text\n2"))["digest"] != first["digest"]
    ignoring_whitespace = base.replace("expected-output-->", "expected-output-ignore-whitespace-->")
    assert fingerprint(ignoring_whitespace)["digest"] != first["digest"]  # compared another way
    assert (
        fingerprint(base.replace("print(1)", "# requires torch >= 2.5\nprint(1)"))["digest"]
        != first["digest"]
    )


def test_removing_a_cont_marker_makes_every_record_of_the_pages_stale(tmp_path):
    # the same code and outputs: the second block now runs alone (and fails with a NameError), not
    # after the first
    page = tmp_path / "page.en.md"
    chain = "```python\nx = 1\n```\n\n<!--pytest-codeblocks:cont-->\n```python\nprint(x)\n```\n"
    page.write_text(chain, encoding="utf-8")
    ran = record(passed=2, pages=records.fingerprint([page]))
    assert records.proves(ran, records.fingerprint([page]))
    page.write_text(chain.replace("<!--pytest-codeblocks:cont-->\n", ""), encoding="utf-8")
    assert not records.proves(ran, records.fingerprint([page]))


def test_a_run_that_had_cuda_is_recorded_on_cuda_whether_or_not_it_was_required(monkeypatch):
    environment = {
        "cuda": {"device": "NVIDIA H200", "capability": "9.0", "version": "13.0"},
        "torch": "2.13.0",
    }
    monkeypatch.setattr(records, "environment", lambda: environment)
    monkeypatch.setattr(records, "fingerprint", lambda: CURRENT)
    counts = {"passed": 1, "failed": 0, "skipped": 0}
    ran = records.record(require_cuda=False, page_blocks=counts, tests=counts, command="pytest")
    assert (ran["device"], ran["require_cuda"]) == ("cuda", False)
    monkeypatch.setattr(records, "environment", lambda: {**environment, "cuda": None})
    assert (
        records.record(require_cuda=False, page_blocks=counts, tests=counts, command="pytest")[
            "device"
        ]
        == "cpu"
    )


def test_make_record_refuses_a_tree_with_uncommitted_changes(tmp_path):
    # the Makefile's rule, in a repository of its own: committed, then edited
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "page.md").write_text("a page\n", encoding="utf-8")
    git = ["git", "-c", "user.name=qkv", "-c", "user.email=qkv@example.invalid"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "a page"]):
        subprocess.run([*git, *command], cwd=tmp_path, check=True)
    assert (
        subprocess.run(["make", "-s", "committed"], cwd=tmp_path, capture_output=True).returncode
        == 0
    )
    (tmp_path / "verification" / "records").mkdir(parents=True)
    (tmp_path / "verification" / "records" / "a-run.json").write_text("{}\n", encoding="utf-8")
    # a record written by a run: not a change of code
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    assert (
        subprocess.run(["make", "-s", "committed"], cwd=tmp_path, capture_output=True).returncode
        == 0
    )
    (tmp_path / "page.md").write_text("an edit not yet committed\n", encoding="utf-8")
    refused = subprocess.run(
        ["make", "-s", "committed"], cwd=tmp_path, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "commit or stash your changes first" in refused.stderr


def test_a_record_calls_its_run_clean_though_the_records_it_writes_are_uncommitted(
    tmp_path, monkeypatch
):
    git = ["git", "-c", "user.name=qkv", "-c", "user.email=qkv@example.invalid"]
    (tmp_path / "verification" / "records").mkdir(parents=True)
    (tmp_path / "verification" / "records" / "a-run.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "page.md").write_text("a page\n", encoding="utf-8")
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "a page"]):
        subprocess.run([*git, *command], cwd=tmp_path, check=True)
    monkeypatch.setattr(records, "ROOT", tmp_path)
    (tmp_path / "verification" / "records" / "a-run.json").write_text(
        '{"rewritten": true}\n', encoding="utf-8"
    )
    assert records.commit_state()["clean"] is True
    (tmp_path / "page.md").write_text("an edit\n", encoding="utf-8")
    assert records.commit_state()["clean"] is False
