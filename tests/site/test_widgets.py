"""The figures a reader can move, in headless Chromium: each control moved through its states shows
the numbers the chapter's snippet computes (computed here from the snippet, not read from the
widget's JSON), by mouse and by keyboard; the pages load nothing from outside, log no error, pass
axe in both colour schemes, fit a phone and stay within the transfer budget."""

import re

import pytest
import torch

from tests.conftest import run_snippet

playwright = pytest.importorskip("playwright.sync_api")

from tests.site.browsing import (  # noqa: E402
    AXE,
    NEXT_FRAME,
    WCAG,
    Visit,
    gzip_size,
    new_context,
    served_file,
)

pytestmark = [
    pytest.mark.site,
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

BUDGET = 400 * 1024  # as tests/site/test_browser.py: first-load transfer per page, gzip
PAGES = {
    "sdpa-temperature": "scaled-dot-product/",
    "qkv-who-looks": "qkv/",
    "decoding-alignment": "decoding/",
}
EDITIONS = ["/", "/en/"]


@pytest.fixture
def visit(browser, origin):
    """One page's visit (tests/site/browsing.py): nothing blocked, failed or logged as an error."""
    opened = []

    def open_page(path, **options):
        visit = Visit(new_context(browser, **options), origin)
        visit.page.goto(origin + path, wait_until="networkidle")
        visit.page.wait_for_selector(".qkv-widget .qkv-w-live:not(:empty)")
        opened.append(visit)
        return visit

    yield open_page
    for each in opened:
        assert each.blocked == [] and each.failed == []
        assert each.console == [] and each.errors == []
        each.page.context.close()


def shown_numbers(page, selector=".qkv-widget .qkv-w-num") -> list[str]:
    return page.eval_on_selector_all(selector, "nodes => nodes.map(n => n.textContent)")


def three(t) -> list[str]:
    return [f"{x:.3f}" for x in t.tolist()]


@pytest.fixture(scope="module")
def one_row():
    """What the slider must show at each d_k: chapter 3's row of scores, softmax without and with
    1/√d_k, computed from the snippet."""
    ns = run_snippet("scaled_dot_product/one_row.py")
    q, k = ns["q"].cpu(), ns["k"].cpu()
    rows = {}
    for d_k in ns["d_ks"]:
        scores = k[:, :d_k] @ q[:d_k]
        raw, scaled = torch.softmax(scores, -1), torch.softmax(scores / d_k**0.5, -1)
        rows[d_k] = [x for pair in zip(three(raw), three(scaled), strict=True) for x in pair]
    return ns["d_ks"], rows


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_slider_shows_each_d_ks_weights_with_and_without_the_scale(visit, edition, one_row):
    d_ks, rows = one_row
    page = visit(edition + PAGES["sdpa-temperature"]).page
    slider = page.locator(".qkv-widget input[type=range]")
    label = page.locator(f"label[for='{slider.get_attribute('id')}']")
    slider.focus()
    seen = []
    for key in ["Home", "ArrowRight", "ArrowRight", "ArrowRight", "End", "ArrowLeft", "PageDown"]:
        page.keyboard.press(key)
        d_k = int(page.get_attribute(".qkv-widget [data-d-k]", "data-d-k"))
        assert d_k == d_ks[int(slider.input_value())]
        assert label.text_content().endswith(f"= {d_k}")
        # row by row: key j's unscaled, then scaled weight
        assert shown_numbers(page) == rows[d_k]
        live = page.text_content(".qkv-widget [aria-live=polite]")
        assert f"= {d_k}" in live and max(rows[d_k][0::2]) in live
        seen.append(d_k)
    assert seen[:5] == [1, 2, 4, 8, 1024]
    # a click on the middle of the track moves it to the middle position
    slider.click()
    assert slider.input_value() == str(len(d_ks) // 2)
    assert shown_numbers(page) == rows[d_ks[len(d_ks) // 2]]


@pytest.fixture(scope="module")
def roles():
    """Chapter 2's "dog bites man": each token's row of softmax(Q Kᵀ), from the snippet."""
    ns = run_snippet("qkv/verb_subject.py")
    weights = torch.softmax(ns["Q"].cpu() @ ns["K"].cpu().T, dim=-1)
    return ns["tokens"], [three(row) for row in weights]


@pytest.mark.parametrize("edition", EDITIONS)
def test_picking_a_token_shows_its_attention_weights_by_click_and_by_keyboard(
    visit, edition, roles
):
    tokens, rows = roles
    page = visit(edition + PAGES["qkv-who-looks"]).page
    buttons = page.locator(".qkv-widget button")
    assert buttons.count() == len(tokens)
    # bites is picked first: the chapter's trace
    assert buttons.nth(1).get_attribute("aria-pressed") == "true"
    assert shown_numbers(page) == rows[1] == ["0.844", "0.042", "0.114"]
    for i in [0, 2, 1]:
        buttons.nth(i).click()
        assert shown_numbers(page) == rows[i]
        assert [buttons.nth(j).get_attribute("aria-pressed") for j in range(3)] == [
            str(i == j).lower() for j in range(3)
        ]
        assert ", ".join(rows[i]) in page.text_content(".qkv-widget [aria-live=polite]")
    buttons.nth(0).focus()
    page.keyboard.press("Enter")
    assert shown_numbers(page) == rows[0]
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    assert shown_numbers(page) == rows[1]


@pytest.fixture(scope="module")
def alignments():
    """Chapter 8's 3 new tokens and 7 keys: which keys sdpa lets each see, from the snippet."""
    ns = run_snippet("decoding/causal_alignment.py")
    q, k, L_q, L_k = ns["q"].cpu(), ns["k"].cpu(), ns["L_q"], ns["L_k"]
    eye = torch.eye(L_k)
    allowed = torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q)
    seen = {
        "top left": torch.nn.functional.scaled_dot_product_attention(q, k, eye, is_causal=True),
        "bottom right": torch.nn.functional.scaled_dot_product_attention(
            q, k, eye, attn_mask=allowed
        ),
    }
    return {name: [str(int(x > 0)) for x in w[0, 0].flatten()] for name, w in seen.items()}


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_toggle_shows_which_keys_each_query_sees_under_each_alignment(
    visit, edition, alignments
):
    page = visit(edition + PAGES["decoding-alignment"]).page
    buttons = page.locator(".qkv-widget button")
    assert buttons.nth(0).text_content().startswith("is_causal=True")
    assert buttons.nth(1).text_content().startswith("causal_lower_right")
    cells = ".qkv-widget tbody td"
    for i, name in [(0, "top left"), (1, "bottom right"), (0, "top left")]:
        buttons.nth(i).click()
        assert shown_numbers(page, cells) == alignments[name]
        counts = [alignments[name][r * 7 : r * 7 + 7].count("1") for r in range(3)]
        live = page.text_content(".qkv-widget [aria-live=polite]")
        found = re.findall(r"sees (\d+) of 7|7 个键里的 (\d+)", live)
        assert [int(en or zh) for en, zh in found] == counts
    buttons.nth(1).focus()
    page.keyboard.press("Enter")
    assert shown_numbers(page, cells) == alignments["bottom right"]


def widget_violations(page) -> list[str]:
    """axe-core's WCAG 2.1 A and AA violations inside the page's widget (axe is added to the page
    once)."""
    if page.evaluate("typeof axe === 'undefined'"):
        page.add_script_tag(path=str(AXE))
    report = page.evaluate(
        f"axe.run(document.querySelector('.qkv-widget'), {{runOnly: {WCAG}, "
        "resultTypes: ['violations']})"
    )
    return [f"{v['id']}: {[n['target'] for n in v['nodes']]}" for v in report["violations"]]


WIDGET_PAGES = [edition + path for edition in EDITIONS for path in PAGES.values()]


def switch_scheme(page) -> str:
    """Click the header's colour-scheme toggle, as a reader does; the scheme now shown."""
    before = page.evaluate("document.body.dataset.mdColorScheme")
    page.locator("form[data-qkv-palette] label:visible").click()
    page.evaluate(NEXT_FRAME)  # the palette's transitions are off for two frames
    after = page.evaluate("document.body.dataset.mdColorScheme")
    assert after != before
    return after


@pytest.mark.parametrize("path", WIDGET_PAGES)
def test_a_widget_passes_axe_in_both_schemes_on_a_desktop_and_a_phone_within_budget(
    visit, site, path
):
    # the whole page, widget drawn, is checked with every page (tests/site/test_browser.py: light,
    # a desktop's width); the widget here in both schemes, switched by the reader's toggle (its
    # colours are the scheme's: docs/javascripts/widgets.js), at a desktop's width and a phone's
    v = visit(path, color_scheme="light")
    seen = {("default", 1280): widget_violations(v.page)}
    dark = switch_scheme(v.page)
    seen[dark, 1280] = widget_violations(v.page)
    v.page.set_viewport_size({"width": 390, "height": 844})
    v.page.evaluate(NEXT_FRAME)
    assert v.page.evaluate("document.documentElement.scrollWidth") <= 390
    seen[dark, 390] = widget_violations(v.page)
    light = switch_scheme(v.page)
    seen[light, 390] = widget_violations(v.page)
    views = [("default", 1280), ("slate", 1280), ("slate", 390), ("default", 390)]
    assert seen == {view: [] for view in views}
    files = {served_file(site, url) for url in v.fetched if "search_index.json" not in url}
    widget = [f for f in files if f.name == "widgets.js" or f.parent.name == "widgets"]
    assert len(widget) == 2  # the viewer and this widget's JSON
    total = sum(gzip_size(f) for f in files)
    added = sum(gzip_size(f) for f in widget)
    print(f"{path}: {total / 1024:.1f} KB gzip, the widget {added / 1024:.1f} KB")
    assert total <= BUDGET


def test_a_page_without_a_widget_does_not_load_the_viewer(origin, browser):
    context = new_context(browser)
    v = Visit(context, origin)
    v.page.goto(origin + "/en/multi-head/", wait_until="networkidle")
    assert not any(url.endswith("widgets.js") for url in v.fetched)
    assert v.console == [] and v.errors == []
    context.close()
