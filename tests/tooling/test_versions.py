"""The supported torch and Python range: declared once (.ci/torch-versions), stated alike, proven by
records."""

import re

import pytest
import yaml

from qkvsite import config, records
from qkvsite.dialect import Page, version_tuple


def rows() -> list[tuple[str, str]]:
    return config.torch_versions()


OLDEST_TORCH, OLDEST_PYTHON = rows()[0]
NEWEST_TORCH = rows()[-1][0]
MINOR = ".".join(OLDEST_TORCH.split(".")[:2])  # "2.1"


def pinned_torch() -> str:
    return re.search(
        r"^torch==(\S+)", (config.ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M
    )[1]


def test_ci_runs_the_page_blocks_against_every_row_of_the_table():
    ci = yaml.safe_load(
        (config.ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    )
    matrix = ci["jobs"]["torch-versions"]["strategy"]["matrix"]["include"]
    assert [(entry["torch"], entry["python"]) for entry in matrix] == rows()


@pytest.mark.parametrize(
    "path",
    [
        "index.zh.md",
        "index.en.md",
        "dot-product.zh.md",
        "dot-product.en.md",
        "faq.zh.md",
        "faq.en.md",
    ],
)
def test_pages_state_the_oldest_supported_torch_and_python(path):
    text = (config.DOCS / path).read_text(encoding="utf-8")
    assert f"PyTorch ≥ {MINOR}" in text and f"Python ≥ {OLDEST_PYTHON}" in text


def test_readme_states_the_range_and_how_to_run_it():
    readme = (config.ROOT / "README.md").read_text(encoding="utf-8")
    assert f"torch ≥ {MINOR}" in readme and f"Python ≥ {OLDEST_PYTHON}" in readme
    assert "bash .ci/torch-versions" in readme


def test_every_declared_requirement_is_newer_than_the_oldest_supported_torch():
    for page in config.source_pages():
        for block in Page(page).blocks:
            if block.requires:
                assert version_tuple(block.requires) > version_tuple(OLDEST_TORCH), block.where


def passing(torch_version: str, python: str | None = None) -> list[dict]:
    return [
        r
        for r in records.load_all()
        if records.passed(r)
        and records.complete(r)
        and r["torch"].split("+")[0] == torch_version
        and (python is None or r["python"].startswith(python + "."))
    ]


@pytest.mark.parametrize(
    "torch_version, python",
    [(OLDEST_TORCH, OLDEST_PYTHON), (NEWEST_TORCH, None), (pinned_torch(), None)],
    ids=["oldest", "newest", "pinned"],
)
def test_a_committed_record_proves_each_torch_the_site_names(torch_version, python):
    assert passing(torch_version, python), (
        f"no passing record for torch {torch_version} (Python {python or 'any'})"
    )


def test_the_record_of_the_oldest_torch_skipped_only_blocks_that_declare_a_newer_torch():
    declared = sum(
        1
        for page in config.source_pages()
        for block in Page(page).blocks
        if block.requires and version_tuple(block.requires) > version_tuple(OLDEST_TORCH)
    )
    newest_record = passing(OLDEST_TORCH, OLDEST_PYTHON)[0]
    if not records.proves(newest_record, records.fingerprint()):
        # its count is of the pages as they were: the torch-versions job of CI makes a new record
        pytest.skip("the pages changed since the oldest torch's record (.ci/torch-versions)")
    assert newest_record["page_blocks"]["skipped"] == declared
