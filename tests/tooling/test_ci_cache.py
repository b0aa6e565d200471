"""CI keeps the build's caches (.cache/) between runs: the cpu job restores and saves them, the
pages job restores them.  (The other checks of the workflows are in tests/site/test_site.py.)"""

import re

import yaml

from tests.conftest import ROOT

CI = ROOT / ".github" / "workflows" / "ci.yml"
# what the cached entries are made with: the lock files and the build's tooling
KEYED_ON = [
    "requirements.txt",
    "requirements-blocks.txt",
    "package-lock.json",
    "pyproject.toml",
    "mkdocs.yml",
    "qkvsite/**",
    "overrides/**",
]


def cache_step(job: str) -> dict:
    (step,) = [
        s
        for s in yaml.safe_load(CI.read_text(encoding="utf-8"))["jobs"][job]["steps"]
        if "cache" in s.get("uses", "")
    ]
    return step


def test_the_cpu_job_restores_and_saves_the_build_caches_but_not_the_verification_records():
    step = cache_step("cpu")
    # restores, then saves after a successful run
    assert re.fullmatch(r"actions/cache@[0-9a-f]{40}", step["uses"])
    # not the verification records: each run's own, uploaded as its artifacts
    assert step["with"]["path"].splitlines() == [".cache", "!.cache/verification"]


def test_the_pages_job_restores_the_cpu_jobs_caches_and_saves_nothing():
    cpu, pages = cache_step("cpu"), cache_step("pages")
    assert re.fullmatch(r"actions/cache/restore@[0-9a-f]{40}", pages["uses"])
    assert pages["uses"].split("@")[1] == cpu["uses"].split("@")[1]
    assert (
        pages["with"] == cpu["with"]
    )  # the same path (part of a cache's version), key and restore keys


def test_the_cache_key_names_the_runner_the_python_and_every_file_the_entries_are_made_with():
    key, restore_keys = (
        cache_step("cpu")["with"]["key"],
        cache_step("cpu")["with"]["restore-keys"].splitlines(),
    )
    assert "${{ runner.os }}" in key and "${{ steps.python.outputs.python-version }}" in key
    (hashed,) = re.findall(r"hashFiles\((.*?)\)", key)
    assert [name.strip(" '") for name in hashed.split(",")] == KEYED_ON
    # hashFiles skips a file that is not there: a renamed one would drop out of the key
    for pattern in KEYED_ON:
        assert list(ROOT.glob(pattern)), pattern
    # a key of its own for each run, so that every successful run saves what it made (actions/cache
    # saves nothing under a key it found); restored: the newest cache of the same files, else of
    # this runner and Python
    assert key.endswith("-${{ github.run_id }}")
    assert restore_keys == [
        key.removesuffix("${{ github.run_id }}"),
        key[: key.index("${{ hashFiles")],
    ]
