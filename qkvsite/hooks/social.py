"""Link previews: OpenGraph and Twitter card data for every page, and a card image drawn at build time.

The image (1200 x 630 PNG, ``cards/<page>.png`` in each language's root) shows
the page title and the site's name, drawn with matplotlib and the CJK font the
figures use: no network, no cairo. Cards are cached in ``.cache/cards/`` by
their content. ``overrides/main.html`` writes the meta tags from
``page.meta["qkv_card"]``; the page description (also Material's
``<meta name="description">``) is the page's first paragraph.
"""

from __future__ import annotations

import hashlib
import html
import io
import re
import textwrap
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from qkvsite import config as site
from qkvsite.cache import write_atomically
from qkvsite.dialect import Page
from qkvsite.hooks import building
from qkvsite.hooks.math import plain, plain_html

WIDTH, HEIGHT = 1200, 630
LOCALES = {"zh": "zh_CN", "en": "en_US"}
TAGLINE = {
    "zh": "每段代码都可运行 · 每个数字都是算出来的",
    "en": "Every block runs · every number was computed",
}
CACHE = site.ROOT / ".cache" / "cards"
CARD_VERSION = "2"  # change to redraw every cached card


def card_path(page_url: str) -> str:
    """cards/<name>.png for a page URL relative to its language root ('' is the home page)."""
    name = "-".join(part for part in page_url.split("/") if part not in ("", ".")) or "index"
    return f"cards/{name}.png"


MARGIN = 0.07  # of the card's width, left of the text and the least right of it
OPENING, CLOSING = "（《“‘「【", "）》”’」】，。、：；！？"  # Chinese punctuation that never ends / starts a line


def wrap(title: str, width: int, lang: str) -> list[str]:
    """Lines of at most ``width`` characters: English breaks between words, Chinese between characters, but
    never after an opening bracket or before a closing one or a stop."""
    lines = textwrap.wrap(title, width=width, break_long_words=lang == "zh")
    for i in range(len(lines) - 1):
        while lines[i] and (lines[i][-1] in OPENING or lines[i + 1][0] in CLOSING):
            lines[i], lines[i + 1] = lines[i][:-1], lines[i][-1] + lines[i + 1]
    return [line for line in lines if line]


def card_figure(title: str, site_name: str, lang: str):
    """The card: the title in the largest size and the longest lines (at most three) that fit inside the margins."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    from qkvsite.figures import setup_fonts

    setup_fonts()
    fig = Figure(figsize=(WIDTH / 100, HEIGHT / 100), dpi=100)  # not pyplot's: saved as PNG, whatever its backend
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.patch.set_facecolor("#1a237e")
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_axis_off()
    ax.add_patch(Rectangle((0, 0), 0.025, 1, color="#ffab40", transform=ax.transAxes))
    ax.text(MARGIN, 0.84, site_name, color="#c5cae9", fontsize=30, va="top", transform=ax.transAxes)
    heading = ax.text(MARGIN, 0.56, title, color="white", fontweight="bold", va="center", linespacing=1.2)
    ax.text(MARGIN, 0.1, TAGLINE[lang], color="#ffe0b2", fontsize=26, transform=ax.transAxes)
    for size, width in [(size, width) for size in (56, 48, 40, 34) for width in range(len(title), 0, -1)]:
        lines = wrap(title, width, lang)
        heading.set_text("\n".join(lines))
        heading.set_fontsize(size)
        if len(lines) <= 3 and heading.get_window_extent(renderer).x1 <= WIDTH * (1 - MARGIN):
            break
    else:
        raise ValueError(f"the title {title!r} does not fit on its link-preview card in three lines")
    return fig


def draw_card(title: str, site_name: str, lang: str) -> bytes:
    buffer = io.BytesIO()
    card_figure(title, site_name, lang).savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def card_file(title: str, site_name: str, lang: str) -> Path:
    key = hashlib.sha256("\0".join([CARD_VERSION, title, site_name, lang]).encode()).hexdigest()[:20]
    return CACHE / f"{key}.png"


def cached_card(title: str, site_name: str, lang: str) -> bytes:
    path = card_file(title, site_name, lang)
    if not path.exists():
        write_atomically(path, draw_card(title, site_name, lang))
    return path.read_bytes()


def draw_cards(cards: list[tuple[str, str, str]]) -> None:
    for card in cards:
        cached_card(*card)


def site_names(config) -> dict[str, str]:
    """Each language's site name: mkdocs-static-i18n gives a language the one it configures, if any."""
    i18n = config.plugins.get("i18n")
    names = {language.locale: language.site_name for language in i18n.config.languages} if i18n else {}
    return {lang: names.get(lang) or config.site_name for lang in site.languages()}


def every_card(config) -> list[tuple[str, str, str]]:
    """The card of every page of every language (a notebook page's is its chapter page's)."""
    cards = set()
    for lang, site_name in site_names(config).items():
        cards |= {(Page(path).title, site_name, lang) for path in site.DOCS.glob(f"*.{lang}.md")}
    return sorted(cards)


PARALLEL_FROM = 8  # fewer cards missing (a title edited under `mkdocs serve`): drawn in the build when asked
_drawing = None  # the cards being drawn in a worker process


@event_priority(200)  # first: the worker starts before the notebooks and figures start theirs
def on_pre_build(config):
    """The cards missing from the cache, drawn in a worker process (``qkvsite.kernel``) while the build runs the
    notebooks, draws the figures and makes the pages: about 2 s less on the build's own thread. It runs at a lower
    priority than the kernels and figures, which the build waits for first; the cards are copied last (``on_env``)."""
    global _drawing
    if building(config) != site.default_language():
        return
    missing = [card for card in every_card(config) if not card_file(*card).exists()]
    if len(missing) >= PARALLEL_FROM:
        from qkvsite.kernel import Workers, lower_priority

        _drawing = Workers(1, initializer=lower_priority)  # needed last: when the pages are written
        _drawing.submit(draw_cards, missing)


def page_title(file: File) -> str:
    """The page's title; a notebook page (notebooks/<chapter>.<lang>.ipynb) has its chapter page's."""
    path = Path(file.abs_src_path)
    return Page(site.DOCS / f"{path.stem}.md" if path.suffix == ".ipynb" else path).title


@event_priority(-200)  # after mkdocs-static-i18n (-100) has sorted the files by language
def on_files(files, config):
    lang = building(config)
    for file in list(files.documentation_pages()):
        url = file.url.removeprefix(site.url_prefix(lang))
        card = (page_title(file), config.site_name, lang)
        if _drawing is None:
            image = File.generated(config, card_path(url), content=cached_card(*card))
        else:  # the worker's file, copied once it is drawn (on_env)
            image = File.generated(config, card_path(url), abs_src_path=str(card_file(*card)))
        image.dest_uri = site.url_prefix(lang) + image.dest_uri
        files.append(image)
    return files


def on_env(env, config, files):
    """The pages are made; the files, the cards among them, are copied next: the worker's cards must be drawn."""
    global _drawing
    if _drawing is not None:
        _drawing.wait()
        _drawing = None
    return env


def first_paragraph(content: str, limit: int) -> str:
    match = re.search(r"<p>(.*?)</p>", content, re.S)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", plain_html(match[1]) if match else "")).split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    stop = max(cut.rfind(p) for p in "。；.;")
    return cut[: stop + 1] if stop > limit // 2 else cut.rsplit(" ", 1)[0] + "…"


def on_page_content(content, page, config, files):
    lang = building(config)
    # a chapter's front matter describes it; other pages are described by their first paragraph.
    # Material writes page.meta.description into <meta name="description"> as it is: escape it here
    # formulas ($...$) and code spans of a description become plain text
    described = plain(page.meta.get("description", "")) or first_paragraph(content, 120 if lang == "zh" else 200)
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
    return content
