"""The cheat sheet prints: its content on at most two A4 pages, without the site's header,
navigation, search or footer (the print stylesheet in docs/stylesheets/extra.css), printed to PDF by
headless Chromium."""

import re

import pytest

from qkvsite import config
from tests.site.browsing import new_context

pytestmark = pytest.mark.site

# what the print stylesheet hides: the header (and its search), the navigation and table of
# contents, the footer, the edit and view buttons
HIDDEN = [".md-header", ".md-search", ".md-sidebar", ".md-footer", ".md-content__button"]


@pytest.fixture(params=config.languages())
def printed(request, browser, origin):
    """The cheat sheet of one edition, loaded and switched to print media."""
    context = new_context(browser)
    page = context.new_page()
    page.goto(origin + "/" + config.page_url("cheatsheet", request.param), wait_until="load")
    page.emulate_media(media="print")
    yield page
    context.close()


def page_count(pdf: bytes) -> int:
    """The pages of a PDF: its page objects (/Type /Page, not /Pages)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def test_page_count_reads_a_pdf():
    two = b"<< /Type /Pages /Count 2 >> << /Type /Page >> << /Type/Page /Parent 1 0 R >>"
    assert page_count(two) == 2


def test_cheat_sheet_prints_on_at_most_two_a4_pages(printed):
    pdf = printed.pdf(format="A4", print_background=True)
    assert 1 <= page_count(pdf) <= 2


def test_printing_leaves_out_the_header_navigation_search_and_footer(printed):
    for selector in HIDDEN:
        shown = printed.locator(selector).evaluate_all(
            "elements => elements.filter(e => e.checkVisibility()).length"
        )
        assert shown == 0, selector
    # the content stays, all of it: every heading, table and code block
    content = printed.locator(".md-content")
    assert content.evaluate("e => e.checkVisibility()")
    for selector in ["h2", "table", ".highlight"]:
        hidden = content.locator(selector).evaluate_all(
            "elements => elements.filter(e => !e.checkVisibility()).length"
        )
        assert hidden == 0, selector


def test_printing_keeps_the_figures_in_their_light_variant(browser, origin):
    context = new_context(browser, color_scheme="dark")  # a reader in the dark scheme prints
    page = context.new_page()
    page.goto(origin + "/transformer/", wait_until="load")
    page.emulate_media(media="print")
    shown = page.locator(".md-content img").evaluate_all(
        "images => images.filter(i => i.checkVisibility()).map(i => i.getAttribute('src'))"
    )
    context.close()
    assert shown and all(not src.endswith(".dark.svg") for src in shown), shown
