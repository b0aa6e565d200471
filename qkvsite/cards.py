"""Link-preview cards: a 1200 x 630 PNG per page, its title and the site's name, drawn with
matplotlib.

Drawn with the CJK font the figures use: no network, no cairo. Cached as entries of
``Cache("cards")``, keyed by the text and the drawing code; ``qkvsite.hooks.social`` adds them to
the site and writes the pages' meta tags.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

from qkvsite.cache import Cache, key, versions

WIDTH, HEIGHT = 1200, 630
LOCALES = {"zh": "zh_CN", "en": "en_US"}
TAGLINE = {
    "zh": "每段代码都可运行 · 每个数字都来自代码",
    "en": "Every block runs · every number comes from the code",
}
CACHE = Cache("cards", ".png")
FONTS = Path(__file__).parent / "fonts.py"  # the fonts the cards are drawn in


def card_path(page_url: str) -> str:
    """cards/<name>.png for a page URL relative to its language root ('' is the home page)."""
    name = "-".join(part for part in page_url.split("/") if part not in ("", ".")) or "index"
    return f"cards/{name}.png"


MARGIN = 0.07  # of the card's width, left of the text and the least right of it
# Chinese punctuation that never ends / starts a line
OPENING, CLOSING = ("（《“‘「【", "）》”’」】，。、：；！？")


def wrap(title: str, width: int, lang: str) -> list[str]:
    """Lines of at most ``width`` characters: English breaks between words, Chinese between
    characters, but never after an opening bracket or before a closing one or a stop."""
    lines = textwrap.wrap(title, width=width, break_long_words=lang == "zh")
    for i in range(len(lines) - 1):
        while lines[i] and (lines[i][-1] in OPENING or lines[i + 1][0] in CLOSING):
            lines[i], lines[i + 1] = lines[i][:-1], lines[i][-1] + lines[i + 1]
    return [line for line in lines if line]


def card_figure(title: str, site_name: str, lang: str):
    """The card: the title in the largest size and the longest lines (at most three) that fit inside
    the margins."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    from qkvsite.fonts import setup_fonts

    setup_fonts()
    fig = Figure(
        figsize=(WIDTH / 100, HEIGHT / 100), dpi=100
    )  # not pyplot's: saved as PNG, whatever its backend
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.patch.set_facecolor("#1a237e")
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_axis_off()
    ax.add_patch(Rectangle((0, 0), 0.025, 1, color="#ffab40", transform=ax.transAxes))
    ax.text(MARGIN, 0.84, site_name, color="#c5cae9", fontsize=30, va="top", transform=ax.transAxes)
    heading = ax.text(
        MARGIN, 0.56, title, color="white", fontweight="bold", va="center", linespacing=1.2
    )
    ax.text(MARGIN, 0.1, TAGLINE[lang], color="#ffe0b2", fontsize=26, transform=ax.transAxes)
    for size, width in [
        (size, width) for size in (56, 48, 40, 34) for width in range(len(title), 0, -1)
    ]:
        lines = wrap(title, width, lang)
        heading.set_text("\n".join(lines))
        heading.set_fontsize(size)
        if len(lines) <= 3 and heading.get_window_extent(renderer).x1 <= WIDTH * (1 - MARGIN):
            break
    else:
        raise ValueError(
            f"the title {title!r} does not fit on its link-preview card in three lines"
        )
    return fig


def draw_card(title: str, site_name: str, lang: str) -> bytes:
    buffer = io.BytesIO()
    card_figure(title, site_name, lang).savefig(
        buffer, format="png", dpi=100, metadata={"Software": None}
    )
    return buffer.getvalue()


def card_key(title: str, site_name: str, lang: str) -> str:
    """Everything a card is drawn from: its text, this module, the fonts' set-up
    (``qkvsite.fonts``) and matplotlib."""
    return key(title, site_name, lang, Path(__file__), FONTS, versions("matplotlib"))


def png(title: str, site_name: str, lang: str) -> bytes:
    """The card, from the cache or drawn now."""
    return CACHE.get_or_make(
        card_key(title, site_name, lang), lambda: draw_card(title, site_name, lang)
    )


def draw(cards: list[tuple[str, str, str]]) -> None:
    """Draw each (title, site name, language) into the cache (in a worker process)."""
    for card in cards:
        png(*card)
