"""The fonts of the figures and the link-preview cards: a CJK font for the Chinese labels, DejaVu
Sans for everything else, text kept as text in the SVG.

Its own module, so that a card's cache key holds the fonts' set-up and not the drawing library.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
from matplotlib import font_manager

CJK_FONTS = [
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "PingFang SC",
    "Microsoft YaHei",
]


@functools.cache
def setup_fonts() -> str:
    """Use a CJK-capable font for layout; SVG keeps text as text for the browser."""
    installed = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONTS:
        if name in installed:
            break
    else:
        raise RuntimeError(
            "No CJK font found for the figures' Chinese labels. Install one of "
            f"{', '.join(CJK_FONTS)} (Debian/Ubuntu: apt-get install fonts-noto-cjk)."
        )
    plt.rcParams.update(
        {
            # DejaVu Sans has the glyphs CJK fonts lack (ᵀ, ⱼ, ...)
            "font.family": [name, "DejaVu Sans", "sans-serif"],
            "svg.fonttype": "none",  # text stays selectable and searchable
            "svg.hashsalt": "qkv",  # stable ids: same values, same file
            "axes.unicode_minus": False,
            "font.size": 11,
            # formulas ($W^Q$, $\sqrt{d_k}$) in DejaVu Sans alone: the default fontset takes the
            # radical and other sized symbols from matplotlib's STIX fonts, which the browser
            # showing the SVG does not have
            "mathtext.fontset": "custom",
            "mathtext.rm": "DejaVu Sans",
            "mathtext.it": "DejaVu Sans:italic",
            "mathtext.bf": "DejaVu Sans:bold",
            "mathtext.sf": "DejaVu Sans",
            "mathtext.cal": "DejaVu Sans:italic",
            "mathtext.tt": "DejaVu Sans Mono",
            "mathtext.fallback": None,
        }
    )
    return name
