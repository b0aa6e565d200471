"""Link previews: OpenGraph and Twitter card data for every page, and its card image
(``qkvsite.cards``).

The image (1200 x 630 PNG, ``cards/<page>.png`` in each language's root) shows the page title and
the site's name; the build draws the missing ones before its first pass
(``qkvsite.prepare``). ``overrides/main.html`` writes the meta tags from
``page.meta["qkv_card"]``; the page description (also Material's ``<meta name="description">``)
is the page's first paragraph.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from mkdocs.structure.files import File

from qkvsite import config as site
from qkvsite.cards import HEIGHT, LOCALES, WIDTH, card_path, png
from qkvsite.dialect import Page
from qkvsite.hooks import building
from qkvsite.hooks.math import plain, plain_html


def every_card() -> list[tuple[str, str, str]]:
    """The card of every page of every language (a notebook page's is its chapter page's)."""
    cards = set()
    for lang in site.languages():
        site_name = site.site_name(lang)
        cards |= {(Page(path).title, site_name, lang) for path in site.DOCS.glob(f"*.{lang}.md")}
    return sorted(cards)


def page_title(file: File) -> str:
    """The page's title; a notebook page (notebooks/<chapter>.<lang>.ipynb) has its chapter
    page's."""
    path = Path(file.abs_src_path)
    return Page(site.DOCS / f"{path.stem}.md" if path.suffix == ".ipynb" else path).title


def add_card_files(files, config) -> None:
    """Each page's card, in the pass's language, as a file of the site."""
    lang = building(config)
    for file in list(files.documentation_pages()):
        url = file.url.removeprefix(site.url_prefix(lang))
        image = File.generated(
            config, card_path(url), content=png(page_title(file), config.site_name, lang)
        )
        image.dest_uri = site.url_prefix(lang) + image.dest_uri
        files.append(image)


def first_paragraph(content: str, limit: int) -> str:
    match = re.search(r"<p>(.*?)</p>", content, re.S)
    text = " ".join(
        html.unescape(re.sub(r"<[^>]+>", "", plain_html(match[1]) if match else "")).split()
    )
    if len(text) <= limit:
        return text
    cut = text[:limit]
    stop = max(cut.rfind(p) for p in "。；.;")
    return cut[: stop + 1] if stop > limit // 2 else cut.rsplit(" ", 1)[0] + "…"


def describe_page(content: str, page, config) -> None:
    """The page's description and link-preview data, in ``page.meta``."""
    lang = building(config)
    # a chapter's front matter describes it; other pages are described by their first paragraph.
    # Material writes page.meta.description into <meta name="description"> as it is: escape it here
    # formulas ($...$) and code spans of a description become plain text
    described = plain(page.meta.get("description", "")) or first_paragraph(
        content, 120 if lang == "zh" else 200
    )
    described = described.replace("`", "")
    page.meta["description"] = html.escape(described[:1].upper() + described[1:])
    url = page.url.removeprefix(site.url_prefix(lang))
    page.meta["qkv_card"] = {
        "type": "website" if page.is_homepage else "article",
        "title": config.site_name if page.is_homepage else f"{page.title} - {config.site_name}",
        "description": html.unescape(page.meta["description"]),  # the template escapes
        "url": page.canonical_url,
        "locale": LOCALES[lang],
        "alternate_locales": [LOCALES[other] for other in site.languages() if other != lang],
        "image": config.site_url.rstrip("/") + "/" + site.url_prefix(lang) + card_path(url),
        "width": WIDTH,
        "height": HEIGHT,
    }
