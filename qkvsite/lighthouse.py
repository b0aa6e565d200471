"""Lighthouse's mobile performance score of every page of a built site: the median of several runs.

    .venv/bin/mkdocs build --strict -d /tmp/qkv-site
    .venv/bin/python -m qkvsite.lighthouse /tmp/qkv-site [--runs 3] [PAGE ...]

A measurement, not a test: Lighthouse is not a dependency of the site (install it with
``npm install --prefix /tmp/lighthouse lighthouse@12.2.3``, or point $LIGHTHOUSE at its
command); it drives Debian's Chromium ($CHROMIUM). The site is served gzipped, under a
sub-path as GitHub Pages serves it, by a server in this process. Runs go one at a time:
two at once on a small machine slow each other down. PAGE is a path such as ``/``, ``/faq/`` or
``/en/notebooks/qkv/``; without one, every page is measured.
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import io
import json
import os
import statistics
import subprocess
import tempfile
import threading
from functools import partial
from pathlib import Path

SUBPATH = "/qkv/"
LIGHTHOUSE = os.environ.get("LIGHTHOUSE", "/tmp/lighthouse/node_modules/.bin/lighthouse")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("pages", nargs="*")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_intermixed_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Gzipped, directory=str(args.site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}{SUBPATH}"
    print(f"{'page':40} {'median':>6}  runs          TBT ms (median)  LCP ms (median)  elements")
    for page in [p.lstrip("/") for p in args.pages] or pages(args.site):
        runs = [run(origin + page) for _ in range(args.runs)]
        scores = [r["score"] for r in runs]
        print(
            f"/{page:39} {statistics.median(scores):6.0f}  {', '.join(map(str, scores)):13} "
            f"{statistics.median(r['tbt'] for r in runs):15.0f}  {statistics.median(r['lcp'] for r in runs):15.0f}"
            f"  {runs[0]['dom']:8.0f}",
            flush=True,
        )
    server.shutdown()


if __name__ == "__main__":
    main()
