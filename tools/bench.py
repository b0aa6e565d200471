"""How fast the author loop is (clean build, warm build, serve edit-to-visible latency and rebuild
count, pytest), and how fast the pages load (Lighthouse).

    .venv/bin/python tools/bench.py [--runs 3] [--tests] [--skip-serve]
    .venv/bin/python tools/bench.py --lighthouse SITE_DIR [--runs 3] [PAGE ...]

A benchmark to compare before and after a change, not a test: the median, minimum and maximum
over the runs, and the time of a fixed Python loop before and after them (the machine's speed). A
clean build starts with .cache/ emptied; a warm build follows it. The serve measurement appends a
sentence to docs/qkv.zh.md under `mkdocs serve` and times until the served page shows it, then
counts the rebuilds in the next 20 s (the page is restored).

``--lighthouse``: Lighthouse's mobile performance score of every page of a built site (or each
PAGE: ``/``, ``/en/notebooks/qkv/``), the median of the runs, one at a time, the site served
gzipped under a sub-path as GitHub Pages serves it. Not a dependency: ``npm install --prefix
/tmp/lighthouse lighthouse@12.2.3`` (or $LIGHTHOUSE); it drives $CHROMIUM.
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import io
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from functools import partial
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
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    return time.perf_counter() - start


def machine_speed() -> float:
    """Seconds one core takes for a fixed pure-Python loop: numbers from different machines (or from
    one shared machine at different times) compare only in proportion to this."""
    code = (
        "import time; t = time.perf_counter(); s = 0\nfor i in range(10**7): s += "
        "i\nprint(time.perf_counter() - t)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return float(result.stdout)


SUBPATH = "/qkv/"
LIGHTHOUSE = os.environ.get("LIGHTHOUSE", "/tmp/lighthouse/node_modules/.bin/lighthouse")
# as the tests (tests/site/browsing.py)
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium-headless-shell")
FLAGS = "--headless --no-sandbox --disable-gpu --disable-background-networking"


class Gzipped(http.server.SimpleHTTPRequestHandler):
    """The site under SUBPATH, compressed as GitHub Pages compresses it."""

    def log_message(self, *args):
        pass

    def send_head(self):
        if not self.path.startswith(SUBPATH):
            self.send_error(404)
            return None
        path = Path(self.translate_path("/" + self.path[len(SUBPATH) :].split("?")[0]))
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file() or "gzip" not in self.headers.get("Accept-Encoding", ""):
            return super().send_head()
        data = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        return io.BytesIO(data)


def pages(site: Path) -> list[str]:
    found = [p.parent.relative_to(site).as_posix() + "/" for p in site.rglob("index.html")]
    return sorted("" if p == "./" else p for p in found)


def run(url: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [LIGHTHOUSE, url, "--quiet", "--form-factor=mobile", "--only-categories=performance",
             f"--chrome-flags={FLAGS}", "--output=json", f"--output-path={report}"],
            env={**os.environ, "CHROME_PATH": CHROMIUM},
            check=True,
            capture_output=True,
        )  # fmt: skip
        result = json.loads(report.read_text(encoding="utf-8"))
    audits = result["audits"]
    return {
        "score": round(result["categories"]["performance"]["score"] * 100),
        "tbt": audits["total-blocking-time"]["numericValue"],
        "lcp": audits["largest-contentful-paint"]["numericValue"],
        "dom": audits["dom-size"]["numericValue"],
    }


def lighthouse(site: Path, paths: list[str], runs: int) -> None:
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(Gzipped, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}{SUBPATH}"
    print(f"{'page':40} {'median':>6}  runs          TBT ms (median)  LCP ms (median)  elements")
    for page in [p.lstrip("/") for p in paths] or pages(site):
        results = [run(origin + page) for _ in range(runs)]
        scores = [r["score"] for r in results]
        print(
            f"/{page:39} {statistics.median(scores):6.0f}  {', '.join(map(str, scores)):13} "
            f"{statistics.median(r['tbt'] for r in results):15.0f}  "
            f"{statistics.median(r['lcp'] for r in results):15.0f}  {results[0]['dom']:8.0f}",
            flush=True,
        )
    server.shutdown()


def summary(name: str, values: list[float], unit: str = "s") -> str:
    fmt = (lambda v: f"{v:.1f}") if unit == "s" else (lambda v: f"{v:.0f}")
    return (
        f"{name:<28} median {fmt(statistics.median(values))}{unit}  min "
        f"{fmt(min(values))}{unit}  max {fmt(max(values))}{unit}  ({len(values)} runs)"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tests", action="store_true", help="also time the whole pytest run")
    parser.add_argument("--skip-serve", action="store_true")
    parser.add_argument(
        "--lighthouse", type=Path, metavar="SITE_DIR", help="Lighthouse's score of each page"
    )
    parser.add_argument(
        "pages", nargs="*", help="with --lighthouse: the pages to measure (all by default)"
    )
    args = parser.parse_intermixed_args(argv)
    if args.lighthouse:
        return lighthouse(args.lighthouse, args.pages, args.runs)
    clean, warm, visible, rebuilds, tests, speed = [], [], [], [], [], [machine_speed()]
    print(
        f"{os.cpu_count()} cores; a 10^7-step Python loop takes {speed[0]:.2f}s on one", flush=True
    )
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
