"""How fast the author loop is: clean build, warm build, serve edit-to-visible latency and rebuild count, pytest.

    .venv/bin/python -m qkvsite.bench [--runs 3] [--tests] [--skip-serve]

A benchmark to compare before and after a change, not a test: it prints the
median, minimum and maximum of each figure over the runs, and the time of a
fixed Python loop before and after them (the machine's speed at the time). A
clean build starts with no build caches (.cache/ emptied); a warm build follows
it. The serve measurement starts `mkdocs serve`, appends a sentence to
docs/qkv.zh.md, and times how long until the served page shows it and how many
rebuilds follow in the next 20 s; the page is restored afterwards.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from qkvsite.config import ROOT

CACHE = ROOT / ".cache"
EDITED = ROOT / "docs" / "qkv.zh.md"
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(site_dir: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site_dir)],
        cwd=ROOT,
        env=ENV,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def clean_caches():
    for name in os.listdir(CACHE) if CACHE.exists() else []:
        if name != "verification":  # records of test runs are not build caches
            shutil.rmtree(CACHE / name, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode("utf-8")
    except OSError:
        return None


def serve_edit(timeout: float = 120) -> tuple[float, int]:
    """Seconds from saving an edit to seeing it served, and rebuilds in the 20 s after the edit."""
    port = free_port()
    log = tempfile.TemporaryFile(mode="w+")
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=ENV,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/qkv/"
    original = EDITED.read_text(encoding="utf-8")
    marker = f"bench-marker-{time.time_ns()}"
    try:
        deadline = time.time() + timeout
        while fetch(url) is None:
            if time.time() > deadline or server.poll() is not None:
                raise RuntimeError("mkdocs serve did not come up")
            time.sleep(0.5)
        time.sleep(2)  # let the watcher settle after the first build
        log.seek(0, os.SEEK_END)
        before = log.tell()
        edited = time.perf_counter()
        EDITED.write_text(original + f"\n{marker}\n", encoding="utf-8")
        while marker not in (fetch(url) or ""):
            if time.perf_counter() - edited > timeout:
                raise RuntimeError("the edit never became visible")
            time.sleep(0.1)
        visible = time.perf_counter() - edited
        time.sleep(max(0.0, 20 - visible))
        log.seek(before)
        rebuilds = len(re.findall(r"Documentation built in", log.read()))
        return visible, rebuilds
    finally:
        EDITED.write_text(original, encoding="utf-8")
        server.terminate()
        server.wait(timeout=30)


def pytest_wall() -> float:
    """The full pytest run as `make test` runs it (one torch thread)."""
    start = time.perf_counter()
    env = {**ENV, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=ROOT, env=env, check=True)
    return time.perf_counter() - start


def machine_speed() -> float:
    """Seconds one core takes for a fixed pure-Python loop: numbers from different machines (or from one shared
    machine at different times) compare only in proportion to this."""
    code = "import time; t = time.perf_counter(); s = 0\nfor i in range(10**7): s += i\nprint(time.perf_counter() - t)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(result.stdout)


def summary(name: str, values: list[float], unit: str = "s") -> str:
    fmt = (lambda v: f"{v:.1f}") if unit == "s" else (lambda v: f"{v:.0f}")
    return (
        f"{name:<28} median {fmt(statistics.median(values))}{unit}  "
        f"min {fmt(min(values))}{unit}  max {fmt(max(values))}{unit}  ({len(values)} runs)"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tests", action="store_true", help="also time the whole pytest run")
    parser.add_argument("--skip-serve", action="store_true")
    args = parser.parse_args(argv)
    clean, warm, visible, rebuilds, tests, speed = [], [], [], [], [], [machine_speed()]
    print(f"{os.cpu_count()} cores; a 10^7-step Python loop takes {speed[0]:.2f}s on one", flush=True)
    with tempfile.TemporaryDirectory() as out:
        for run in range(args.runs):
            clean_caches()
            clean.append(build(Path(out) / f"clean{run}"))
            warm.append(build(Path(out) / f"warm{run}"))
            print(f"run {run + 1}: clean {clean[-1]:.1f}s, warm {warm[-1]:.1f}s", flush=True)
    if not args.skip_serve:
        for _ in range(args.runs):
            seconds, count = serve_edit()
            visible.append(seconds)
            rebuilds.append(count)
            print(f"serve: visible after {seconds:.1f}s, {count} rebuild(s)", flush=True)
    if args.tests:
        for _ in range(args.runs):
            tests.append(pytest_wall())
    speed.append(machine_speed())
    print()
    print(summary("machine: 10^7-step loop", speed))
    print(summary("clean build", clean))
    print(summary("warm build", warm))
    if visible:
        print(summary("serve: edit to visible", visible))
        print(summary("serve: rebuilds per edit", rebuilds, unit=""))
    if tests:
        print(summary("pytest (all tests)", tests))


if __name__ == "__main__":
    main()
