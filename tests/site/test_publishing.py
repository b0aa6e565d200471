"""The site as published: under a sub-path (SITE_URL), linked to its source (REPO_URL), with link
previews."""

import itertools
import re
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import pytest

from qkvsite import config
from qkvsite.config import ROOT
from qkvsite.dialect import Page
from tests.conftest import REPO_URL, SITE_URL, SUBPATH

NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}
PAGES = config.source_pages()
IDS = [p.name for p in PAGES]


def built(site, page: Path) -> str:
    url = config.page_url(config.page_name(page), config.language_of(page))
    return (site / url / "index.html").read_text(encoding="utf-8")


def head(html: str) -> str:
    return html[: html.index("</head>")]


def meta(html: str, key: str) -> list[str]:
    """The content of every <meta property|name="key"> in the head."""
    return [
        unescape(m)
        for m in re.findall(
            rf'<meta (?:property|name)="{re.escape(key)}" content="([^"]*)"', head(html)
        )
    ]


def sitemap(site) -> dict[str, dict[str, str]]:
    """Each <loc> of sitemap.xml with its hreflang alternates."""
    root = ET.parse(site / "sitemap.xml").getroot()
    return {
        url.find("s:loc", NS).text: {
            a.get("hreflang"): a.get("href") for a in url.findall("x:link", NS)
        }
        for url in root.findall("s:url", NS)
    }


def test_sitemap_lists_every_page_of_both_editions_under_site_url_with_hreflang_alternates(site):
    entries = sitemap(site)
    for page in PAGES:
        name = config.page_name(page)
        loc = SITE_URL + config.page_url(name, config.language_of(page))
        assert loc in entries, loc
        assert entries[loc] == {
            lang: SITE_URL + config.page_url(name, lang) for lang in config.languages()
        }
    assert "None" not in (site / "sitemap.xml").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_page_has_its_canonical_url_and_link_preview_in_its_language(site, page):
    html = built(site, page)
    lang, name = config.language_of(page), config.page_name(page)
    url = SITE_URL + config.page_url(name, lang)
    assert f'<link rel="canonical" href="{url}">' in head(html)
    assert meta(html, "og:url") == [url]
    assert meta(html, "og:locale") == [{"zh": "zh_CN", "en": "en_US"}[lang]]
    title = Page(page).title
    assert title in meta(html, "og:title")[0] and meta(html, "twitter:title") == meta(
        html, "og:title"
    )
    (description,) = meta(html, "og:description")
    assert len(description) > 20 and description == meta(html, "description")[0]
    (image,) = meta(html, "og:image")
    assert (
        image.startswith(SITE_URL)
        and (site / image.removeprefix(SITE_URL)).read_bytes()[:4] == b"\x89PNG"
    )
    assert meta(html, "twitter:card") == ["summary_large_image"]


@pytest.mark.parametrize("lang", config.languages())
def test_every_link_preview_card_shows_the_whole_title_inside_its_margins(lang):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from qkvsite.cards import CLOSING, HEIGHT, MARGIN, OPENING, WIDTH, card_figure

    site_name = config.site_name(lang)
    for page in [p for p in PAGES if config.language_of(p) == lang]:
        title = Page(page).title
        fig = card_figure(title, site_name, lang)
        renderer = FigureCanvasAgg(fig).get_renderer()
        texts = fig.axes[0].texts
        heading = texts[1]
        # all of it, in order
        assert "".join(heading.get_text().split()) == "".join(title.split()), title
        # English breaks between words
        assert heading.get_text().split() == title.split() or lang == "zh", title
        lines = heading.get_text().split("\n")
        assert not any(a[-1] in OPENING or b[0] in CLOSING for a, b in itertools.pairwise(lines)), (
            lines
        )
        for text in texts:
            box = text.get_window_extent(renderer)
            assert (
                0 <= box.x0 and box.x1 <= WIDTH * (1 - MARGIN) and 0 <= box.y0 and box.y1 <= HEIGHT
            ), (title, text)


@pytest.mark.parametrize("lang", config.languages())
@pytest.mark.parametrize("chapter", config.chapters())
def test_a_notebook_pages_link_preview_card_shows_its_chapters_title(site, chapter, lang):
    def card(url):
        html = (site / url / "index.html").read_text(encoding="utf-8")
        (image,) = meta(html, "og:image")
        return (site / image.removeprefix(SITE_URL)).read_bytes()

    prefix = config.url_prefix(lang)
    # the same title, site name and language draw the same card
    assert card(f"{prefix}notebooks/{chapter}/") == card(config.page_url(chapter, lang))


def test_the_cards_drawn_before_the_first_pass_are_every_card_the_site_shows(site):
    # the build draws the missing cards before it reads its pages: from the page files and each
    # language's site name
    from qkvsite.cards import CACHE, card_key
    from qkvsite.hooks.social import every_card

    ahead = {CACHE.get(card_key(*card)) for card in every_card()}
    assert {path.read_bytes() for path in site.rglob("cards/*.png")} == ahead


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_page_links_to_its_source_and_to_edit_it(site, page):
    html = built(site, page)
    source = f"docs/{page.name}"
    assert f'href="{REPO_URL}/edit/main/{source}"' in html
    assert f'href="{REPO_URL}/raw/main/{source}"' in html
    assert (config.ROOT / source).is_file()


@pytest.mark.parametrize("chapter", config.chapters())
def test_a_notebook_page_edits_its_chapter_page(site, chapter):
    html = (site / "notebooks" / chapter / "index.html").read_text(encoding="utf-8")
    assert f'href="{REPO_URL}/edit/main/docs/{chapter}.zh.md"' in html


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_code_block_title_links_to_the_lines_of_its_snippet_section(site, page):
    links = re.findall(r'<span class="filename"><a href="([^"]+)">([^<]+)</a>', built(site, page))
    blocks = Page(page).blocks
    assert len(links) == len(blocks)
    for (href, shown), block in zip(links, blocks, strict=True):
        include = block.includes[0]
        assert shown == include.path
        match = re.fullmatch(
            rf"{re.escape(REPO_URL)}/blob/main/(\S+)#L(\d+)-L(\d+)", unescape(href)
        )
        assert match and match[1] == include.path, href
        lines = (config.ROOT / include.path).read_text(encoding="utf-8").split("\n")
        first, last = int(match[2]), int(match[3])
        assert (
            f"[start:{include.section}]" in lines[first - 2]
            and f"[end:{include.section}]" in lines[last]
        )


def test_the_home_page_links_the_readme_in_the_repository(site):
    for lang in config.languages():
        html = (site / config.url_prefix(lang) / "index.html").read_text(encoding="utf-8")
        assert f'href="{REPO_URL}/blob/main/README.md"' in html
        assert "repo:" not in html


@pytest.mark.parametrize("lang", config.languages())
def test_404_pages_use_the_site_root_for_styles_and_links(site, lang):
    html = (site / config.url_prefix(lang) / "404.html").read_text(encoding="utf-8")
    base = SUBPATH
    hrefs = re.findall(r'(?:href|src)="([^"#]+)"', html)
    local = [h for h in hrefs if not h.startswith(("http://", "https://", "data:"))]
    assert local and all(h.startswith(base) for h in local), [
        h for h in local if not h.startswith(base)
    ]
    assert f'<html lang="{lang}"' in html


@pytest.mark.parametrize(
    "remote, repo",
    [
        ("git@github.com:someone/qkv.git", "https://github.com/someone/qkv"),
        ("https://github.com/someone/qkv-site", "https://github.com/someone/qkv-site"),
        ("https://gitlab.com/someone/qkv.git", ""),
    ],
)
def test_a_local_build_links_the_github_repository_its_clone_came_from(
    tmp_path, monkeypatch, remote, repo
):
    import subprocess
    from types import SimpleNamespace

    from qkvsite.hooks import sources

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", remote], check=True)
    monkeypatch.setattr(sources.site, "ROOT", tmp_path)
    monkeypatch.delenv("REPO_URL", raising=False)
    config = SimpleNamespace(repo_url="")  # mkdocs.yml's, without REPO_URL
    sources.repo_from_git_remote(config)
    assert config.repo_url == repo
    monkeypatch.setenv("REPO_URL", "https://github.com/set/explicitly")
    config.repo_url = "https://github.com/set/explicitly"
    sources.repo_from_git_remote(config)
    assert config.repo_url == "https://github.com/set/explicitly"


def test_without_a_repository_nothing_links_to_a_placeholder(tmp_path, monkeypatch):
    """No REPO_URL and no GitHub origin: no source, edit or repo: link, rather than OWNER/REPO."""
    from types import SimpleNamespace

    from mkdocs.config import load_config

    from qkvsite.hooks import sources

    monkeypatch.delenv("REPO_URL", raising=False)
    assert load_config(str(ROOT / "mkdocs.yml")).repo_url in ("", None)
    page = tmp_path / "page.en.md"
    page.write_text(
        "See the [README](repo:README.md).\n\n```python\n"
        '--8<-- "snippets/dot_product/two_vectors.py:dot"\n```\n',
        encoding="utf-8",
    )
    config = SimpleNamespace(repo_url="", edit_uri="edit/main/docs/")
    meta = SimpleNamespace(file=SimpleNamespace(abs_src_path=str(page)), meta={})
    markdown = sources.title_blocks(page.read_text(encoding="utf-8"), meta, config)
    assert "See the README." in markdown and "repo:" not in markdown
    title = '<span class="filename">snippets/dot_product/two_vectors.py'
    assert sources.link_titles(title, meta) == title  # the file name stays text


def test_without_a_repository_there_are_no_edit_links():
    from types import SimpleNamespace

    from qkvsite.hooks import sources

    config = SimpleNamespace(repo_url="", edit_uri="edit/main/docs/")
    sources.no_repository_no_edit_links(config)
    assert config.edit_uri is None
    config = SimpleNamespace(repo_url="https://github.com/someone/qkv", edit_uri="edit/main/docs/")
    sources.no_repository_no_edit_links(config)
    assert config.edit_uri == "edit/main/docs/"
