"""Verification records: what ran the page blocks, where, and with which result.

Every test run that executes page blocks writes one small JSON record (``write``). Committed records
live in ``verification/records/``; the Verification page and the footer are generated from them
(``load_all``, ``summary``), so the site claims only what a record shows.

A record proves the pages it ran, not whatever the pages say later: it carries the fingerprint of
every page block (code, shown output, torch requirement) and how many there were, and the site
claims only records whose run covered every block of the pages as they are now (``proves``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from qkvsite import config
from qkvsite.dialect import Page
from qkvsite.machine import environment

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "verification" / "records"


def commit_state() -> dict:
    def git(*args):
        result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else None

    # clean: no uncommitted change to a tracked file but the records themselves (a run writes them)
    changed = git(
        "status", "--porcelain", "--untracked-files=no", "--", ".", ":!verification/records"
    )
    return {"commit": git("rev-parse", "HEAD"), "clean": changed == ""}


def _runner() -> str:
    if os.environ.get("GITHUB_ACTIONS") == "true":
        return "github-actions"
    return "ci" if os.environ.get("CI") == "true" else "local"


def fingerprint(pages: list[Path] | None = None) -> dict:
    """Every page block as it runs, and the count: a digest of everything that decides how a block
    runs and what it is checked against: its code, whether it continues the block above (so the
    blocks it runs after), its shown output and how that is compared (its marker), and the torch it
    requires."""
    digest, count = hashlib.sha256(), 0
    for path in sorted(config.source_pages() if pages is None else pages):
        for block in Page(path).blocks:
            count += 1
            output = (block.output.marker, block.output.body) if block.output else ("", "")
            if block.output and block.output.comparison:  # numbers, tolerance=..., measured=...
                output += (block.output.info,)
            for part in (
                path.name,
                block.code,
                "cont" if block.continues else "",
                *output,
                block.requires or "",
            ):
                digest.update(part.encode("utf-8") + b"\0")
    return {"digest": digest.hexdigest()[:16], "blocks": count}


def record(*, require_cuda: bool, page_blocks: dict, tests: dict, command: str) -> dict:
    """What a run did. Its device is the one the blocks ran on: the examples pick CUDA when it is
    available, so a run that had CUDA ran them there, required or not (``require_cuda``: whether the
    GPU rule checked it)."""
    env = environment()
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "runner": _runner(),
        **commit_state(),
        "device": "cuda" if require_cuda or env["cuda"] else "cpu",
        "require_cuda": require_cuda,
        **env,
        "pages": fingerprint(),
        "page_blocks": page_blocks,
        "tests": tests,
        "command": command,
    }


def file_name(rec: dict) -> str:
    """One file per configuration and day: a rerun the same day replaces it."""
    parts = [
        rec["date"][:10],
        rec["device"],
        f"torch{rec['torch'].split('+')[0]}",
        f"py{rec['python']}",
    ]
    if rec["device"] == "cpu":
        parts.append(rec["cpu_capability"])
    return "-".join(parts) + ".json"


def write(rec: dict, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name(rec)
    path.write_text(json.dumps(rec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_all(directory: Path = RECORDS) -> list[dict]:
    """Every committed record, newest first."""
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.json"))]
    return sorted(records, key=lambda r: r["date"], reverse=True)


def passed(rec: dict) -> bool:
    """No page block failed and some ran (blocks that need a newer torch may have been skipped)."""
    blocks = rec["page_blocks"]
    return blocks["failed"] == 0 and blocks["passed"] > 0


def complete(rec: dict) -> bool:
    """The run reached every block of the pages it fingerprinted (not one page, not a selection)."""
    pages = rec.get("pages")
    return pages is not None and sum(rec["page_blocks"].values()) == pages["blocks"]


def proves(rec: dict, current: dict) -> bool:
    """Passed, complete, and run on the page blocks as they are now (``current``:
    ``fingerprint()``)."""
    return passed(rec) and complete(rec) and rec["pages"]["digest"] == current["digest"]


def summary(records: list[dict], current: dict) -> dict[str, dict[str, list[str]]]:
    """What the records prove about the current pages, per device: the torch versions that ran every
    page block ("all"), and those that ran every block except the ones declaring a newer torch
    ("all_but_newer")."""
    proven = {device: {"all": set(), "all_but_newer": set()} for device in ("cpu", "cuda")}
    for rec in records:
        if proves(rec, current):
            kind = "all" if rec["page_blocks"]["skipped"] == 0 else "all_but_newer"
            proven[rec["device"]][kind].add(rec["torch"].split("+")[0])
    key = lambda v: tuple(int(x) for x in re.findall(r"\d+", v))  # noqa: E731
    for kinds in proven.values():
        kinds["all_but_newer"] -= kinds["all"]
    return {
        device: {kind: sorted(v, key=key) for kind, v in kinds.items()}
        for device, kinds in proven.items()
    }
