"""The built site served as GitHub Pages serves it, and every page loaded in headless Chromium.

Used by tests/conftest.py, which starts the server and the page loads as soon as the build
starts, and by tests/site/test_browser.py. Needs Debian's chromium-headless-shell
(/usr/bin/chromium-headless-shell, or any Chromium as $CHROMIUM) and axe-core from npm
(node_modules/, see package.json); .ci/run installs both.
"""

import functools
import gzip
import http.server
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright import sync_api as playwright

from tests.conftest import ROOT, SUBPATH

# Debian's headless build of Chromium (package chromium-headless-shell): the same engine without
# the desktop browser around it, about a sixth less CPU per page load
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium-headless-shell")
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


class PagesHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site the way GitHub Pages serves a project: under SUBPATH, with 404.html for a
    missing path."""

    def log_message(self, *args):
        pass

    def translate_path(self, path):
        path = urlparse(path).path
        if not path.startswith(SUBPATH):
            return str(Path(self.directory) / "no-such-file")  # outside the project: 404
        return super().translate_path("/" + path[len(SUBPATH) :])

    def send_error(self, code, message=None, explain=None):
        not_found = Path(self.directory) / "404.html"
        if code != 404 or not not_found.exists():
            return super().send_error(code, message, explain)
        body = not_found.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class PagesServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # a browser that closed the socket mid-response
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Server:
    """The directory served under SUBPATH on a free local port, from a thread; it may still be being
    built."""

    def __init__(self, directory: Path):
        self.httpd = PagesServer(("127.0.0.1", 0), partial(PagesHandler, directory=str(directory)))
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.origin = self.url + SUBPATH.rstrip(
            "/"
        )  # the host and the project's sub-path, no trailing slash

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
# browsers loading pages beside the other tests. One takes more than a core while it loads a page:
# with two, the tests that train models took 15.4 s instead of 9.0 s, and the whole run took longer
# (by pytest's count, one sitting: 117.1 and 122.9 s with one, 123.7 and 123.5 s with two; another:
# 107.7 s against 111.1 s)
WORKERS = 1


def launch(p):
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"no Chromium at {CHROMIUM} (apt-get install chromium-headless-shell, or set CHROMIUM)"
        )
    return p.chromium.launch(executable_path=CHROMIUM, args=ARGS)


@functools.cache
def searchless_index_body(url: str) -> tuple[int, bytes]:
    """The status and body of the search index at ``url`` with its ``docs`` left out, fetched
    once."""
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, json.dumps({**json.load(response), "docs": []}).encode()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def searchless_index(route):
    """The site's search index with its settings and no documents (see ``new_context``)."""
    status, body = searchless_index_body(route.request.url)
    try:
        # an error: the visit sees it
        route.fulfill(status=status, body=body, content_type="application/json")
    except playwright.Error:
        # the page or its context closed while the index was on the way: nothing waits for it
        pass


def new_context(browser, search: bool = False, **options):
    """A browser context; unless ``search``, its pages get a search index without documents.

    Material downloads the search index after every page load and builds it in a worker: about
    0.7 s of CPU per page here, for an index that only the search tests (``search_pages``) query.
    The other pages get the site's own index with its documents left out, so the worker starts
    and sets itself up as it does for a reader, without indexing every page again.
    """
    context = browser.new_context(**options)
    if not search:
        context.route("**/search/search_index.json", searchless_index)
    return context


def page_urls(site) -> list[str]:
    """Every page of both editions, and both 404 pages."""
    urls = [f"/{p.relative_to(site).as_posix()}" for p in site.rglob("404.html")]
    for index in site.rglob("index.html"):
        rel = index.parent.relative_to(site).as_posix()
        urls.append("/" if rel == "." else f"/{rel}/")
    return sorted(urls)


class Visit:
    """One page load: what the browser requested, what failed, what it logged."""

    def __init__(self, context, origin):
        self.origin = origin
        self.blocked, self.failed, self.console, self.errors, self.fetched = [], [], [], [], []
        context.route("**/*", self.route)
        self.page = context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.console.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url} {r.failure}"))
        self.page.on("response", self.response)

    def route(self, route):
        if route.request.url.startswith(self.origin):
            route.fallback()  # to the context's own routes (new_context), then the network
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def response(self, response):
        if response.status >= 400:
            self.failed.append(f"{response.url} {response.status}")
        elif response.url.startswith(self.origin) and response.status == 200:
            self.fetched.append(response.url)

    def transfer(self, site: Path) -> int:
        """gzip bytes of everything the first load fetched, search index excluded.

        The test server sends the built files as they are: each is measured from the site
        directory (reading every body back from the browser cost more CPU than the page load).
        """
        files = {
            served_file(site, url)
            for url in self.fetched
            if "search_index.json" not in urlparse(url).path
        }
        return sum(gzip_size(path) for path in files)


def served_file(site: Path, url: str) -> Path:
    path = in_site(url).lstrip("/")
    return site / (path + "index.html" if path == "" or path.endswith("/") else path)


@functools.cache
def gzip_size(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), 6))


# every image the page shows (figures load lazily: made eager here), and those that did not load
SHOWN_IMAGES_THAT_FAIL = """async () => {
  const shown = [...document.images].filter((i) => i.checkVisibility());
  shown.forEach((i) => { i.loading = "eager"; });
  await Promise.all(shown.map((i) => i.decode().catch(() => null)));
  return shown.filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.src);
}"""


# resolves once the page has drawn two more frames: what it restyles or sizes meanwhile has run
NEXT_FRAME = "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"

WCAG = "{type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}"

# Marks every element whose text has the same contrast as text axe has already checked in this run:
# the same text colour, size, weight and shadow, over the same backgrounds (up to the first opaque
# one), under the same opacity and filters. Those are what axe's color-contrast reads; an element
# it could not judge (hidden, or scrolled out of a code block) is not a representative, so its
# style is checked again where it is shown. Returns the styles this page's check covers for the
# first time, and whether any shown text is left to check.
MARK_CHECKED_CONTRAST = """(checked) => {
  checked = new Set(checked);
  const fresh = new Set();
  const behind = new Map(), faded = new Map();
  const style = (e) => getComputedStyle(e);
  const backdrop = (e) => {  // the backgrounds that show through behind e's text, nearest first
    if (!behind.has(e)) {
      const s = style(e);
      const own = `${s.backgroundColor} ${s.backgroundImage} ${s.mixBlendMode}`;
      const opaque = s.backgroundColor.startsWith("rgb(") && s.backgroundImage === "none";
      behind.set(e, opaque || !e.parentElement ? own : `${own} < ${backdrop(e.parentElement)}`);
    }
    return behind.get(e);
  };
  const fade = (e) => {  // opacity and filters of e and every element around it
    if (!faded.has(e)) {
      const s = style(e);
      faded.set(e, `${s.opacity} ${s.filter} ${e.parentElement ? fade(e.parentElement) : ""}`);
    }
    return faded.get(e);
  };
  // axe can judge it: shown, with a size, inside every box that clips it but the page
  const judged = (e) => {
    if (!e.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = style(a);
      if (s.overflowX === "visible" && s.overflowY === "visible") continue;
      const b = a.getBoundingClientRect();
      if (r.left < b.left || r.right > b.right) return false;
      if (r.top < b.top || r.bottom > b.bottom) return false;
    }
    return true;
  };
  let left = false;  // shown text whose style is not checked yet
  for (const e of document.body.querySelectorAll("*")) {
    if (![...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.data.trim())) continue;
    const s = style(e);
    const key = [s.color, s.fontSize, s.fontWeight, s.textShadow, backdrop(e), fade(e)].join(" | ");
    if (checked.has(key)) {
      e.setAttribute("data-qkv-contrast-checked", "");
    } else if (judged(e)) {
      checked.add(key);
      fresh.add(key);
      left = true;
    } else {
      left ||= e.checkVisibility({ opacityProperty: true, visibilityProperty: true });
    }
  }
  const unchecked = ":not([data-qkv-contrast-checked])";
  axe.configure({ rules: [{ id: "color-contrast", selector: unchecked }] });
  return { fresh: [...fresh], left };
}"""


class CheckedContrast:
    """The text styles (see MARK_CHECKED_CONTRAST) whose colour contrast axe has checked in this
    run.

    Most text on the site repeats from page to page: both editions show the same code in the same
    highlighting and the same formulas, and the notebook pages repeat the chapters' code. axe's
    color-contrast, most of its time on a page, checks each style once, where it is first shown;
    every other rule checks every page whole.
    """

    def __init__(self):
        self.styles: set[str] = set()
        self.lock = threading.Lock()

    def snapshot(self) -> list[str]:
        with self.lock:
            return list(self.styles)

    def add(self, styles: list[str]) -> None:
        with self.lock:
            self.styles.update(styles)


def wcag_violations(page, checked: CheckedContrast) -> list[str]:
    """axe-core's WCAG 2.1 A and AA violations on ``page``, colour contrast checked once per text
    style."""
    page.add_script_tag(path=str(AXE))
    marked = page.evaluate(MARK_CHECKED_CONTRAST, checked.snapshot())
    # with no text left to check, color-contrast is off: it would still lay out a grid of the whole
    # page
    contrast = "true" if marked["left"] else "false"
    # resultTypes: only violations are reported in full; passes are counted, not described (3x
    # faster)
    report = page.evaluate(
        f"axe.run(document, {{runOnly: {WCAG}, rules: {{'color-contrast': {{enabled: "
        f"{contrast}}}}}, resultTypes: ['violations']}})"
    )
    checked.add(marked["fresh"])
    return [
        f"{v['id']}: {v['help']} ({len(v['nodes'])}× e.g. {v['nodes'][0]['target']})"
        for v in report["violations"]
    ]


def visit_pages(paths: list[str], origin: str, checked: CheckedContrast) -> dict:
    """Open each page once in a fresh context of one browser of its own; check it with axe-core."""
    results = {}
    with playwright.sync_playwright() as p:
        browser = launch(p)
        for path in paths:
            context = new_context(browser)
            visit = Visit(context, origin)
            # every request, whatever it is for: the network idle for 500 ms (figures load lazily,
            # after the load event)
            visit.page.goto(origin + path, wait_until="networkidle")
            visit.images = visit.page.evaluate(SHOWN_IMAGES_THAT_FAIL)
            # the widgets axe sees (tests/site/test_widgets.py relies on it): each drawn, or none
            visit.widgets = visit.page.evaluate(
                "[...document.querySelectorAll('.qkv-widget')].map((w) => w.children.length > 0)"
            )
            visit.violations = wcag_violations(visit.page, checked)
            # a phone's width: is the page wider, once its layout has followed the new width (two
            # animation frames: what the page's scripts size on a resize has run)?
            visit.page.set_viewport_size({"width": 390, "height": 844})
            visit.page.evaluate(NEXT_FRAME)
            visit.phone_width = visit.page.evaluate("document.documentElement.scrollWidth")
            results[path] = visit
            context.close()
        browser.close()
    return results


def in_site(url: str) -> str:
    """The path of a URL inside the site: '/en/qkv/' for http://host/qkv/en/qkv/."""
    path = urlparse(url).path
    assert path.startswith(SUBPATH), f"{url} is outside the site"
    return "/" + path[len(SUBPATH) :]


class PageLoads:
    """Every page loaded once, in WORKERS browsers in background threads, as soon as ``build`` is
    done.

    Started with the build (tests/conftest.py), the loads wait on the build, then on Chromium,
    not on the test process: they overlap with the other tests. The tests that read them (those
    using ``visits``) run last.
    """

    def __init__(self, build, origin: str):
        self.pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="page-loads")
        checked = CheckedContrast()  # shared by the workers
        self.futures = [
            self.pool.submit(self.load, build, origin, worker, checked) for worker in range(WORKERS)
        ]

    @staticmethod
    def load(build, origin: str, worker: int, checked: CheckedContrast) -> dict:
        return visit_pages(page_urls(build.wait())[worker::WORKERS], origin, checked)

    def results(self) -> dict:
        """What each page load saw, once every load is done."""
        return {path: visit for future in self.futures for path, visit in future.result().items()}

    def close(self):
        self.pool.shutdown(cancel_futures=True)
