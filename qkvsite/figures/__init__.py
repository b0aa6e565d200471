"""Figures drawn at build time from the values the chapters' examples compute.

Each chapter module registers drawing functions with :func:`figure`. A drawing
function receives the namespace of an example script (its variables after it
ran) and the page language, and returns a matplotlib Figure. The MkDocs hook
in ``overrides/hooks/figures.py`` renders every registered figure to SVG for
every language; nothing is committed as an image file.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import pkgutil
import runpy
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402

SNIPPETS = Path(__file__).resolve().parents[2] / "snippets"

CJK_FONTS = [
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "PingFang SC",
    "Microsoft YaHei",
]

Draw = Callable[[dict, str], "matplotlib.figure.Figure"]


@dataclass(frozen=True)
class Figure:
    name: str  # file name without extension, e.g. "similarity-matrix"
    example: str  # snippet file it takes its values from, relative to snippets/
    draw: Draw


FIGURES: dict[str, Figure] = {}


def figure(name: str, example: str) -> Callable[[Draw], Draw]:
    """Register ``draw`` as ``figures/<name>.svg`` in every language, drawn from ``example``."""

    def register(draw: Draw) -> Draw:
        if name in FIGURES:
            raise ValueError(f"figure {name!r} is registered twice")
        if not (SNIPPETS / example).is_file():
            raise FileNotFoundError(f"figure {name!r}: no example snippets/{example}")
        FIGURES[name] = Figure(name, example, draw)
        return draw

    return register


def run_example(example: str) -> dict:
    """Run snippets/<example> as a script (output discarded); return its variables.

    Cached until the file changes: both languages' figures share one run, and
    ``mkdocs serve`` reruns an example after it is edited.
    """
    path = SNIPPETS / example
    return _run_script(str(path), path.stat().st_mtime_ns)


@functools.cache
def _run_script(path: str, mtime_ns: int) -> dict:
    with contextlib.redirect_stdout(io.StringIO()):
        return runpy.run_path(path, run_name="__main__")


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
        }
    )
    return name


def render_svg(fig: matplotlib.figure.Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return buffer.getvalue()


def render(name: str, lang: str) -> bytes:
    """SVG bytes of figure ``name`` with labels in ``lang`` (cached until its example changes)."""
    example = SNIPPETS / FIGURES[name].example
    return _render(name, lang, example.stat().st_mtime_ns)


@functools.cache
def _render(name: str, lang: str, mtime_ns: int) -> bytes:
    setup_fonts()
    spec = FIGURES[name]
    values = run_example(spec.example)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph draws a box: fail instead
        return render_svg(spec.draw(values, lang))


def heatmap(
    ax,
    values,
    row_labels,
    col_labels,
    *,
    fmt="{:.2f}",
    cmap="Blues",
    vmin=None,
    vmax=None,
):
    """Annotated heatmap of a 2-D array; each label is white or black by its cell's brightness."""
    values = [[float(v) for v in row] for row in values]
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="equal")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            r, g, b, _ = image.cmap(image.norm(v))
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            ax.text(
                j,
                i,
                fmt.format(v),
                ha="center",
                va="center",
                color="white" if dark else "black",
            )
    ax.set_xticks(range(len(col_labels)), col_labels)
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    return image


def row_sums(ax, weights, row_labels, label):
    """One column holding the sum of each row of ``weights`` (1.000 for softmax weights)."""
    heatmap(ax, weights.sum(dim=-1, keepdim=True), row_labels, [label], fmt="{:.3f}", cmap="Greys", vmin=0, vmax=4)
    ax.xaxis.tick_top()


def weighted_rows(
    weights, rows, out, row_names, col_labels, *, times, result, title, note, diverging=False, figsize=(6.4, 3.6)
):
    """out = Σⱼ weights[j] · rows[j], drawn as the weighted rows above the row they add up to.

    ``times`` formats a row label from (weight, name); one colour scale covers all cells, centred on 0 when
    ``diverging`` (values of both signs).
    """
    parts = weights[:, None] * rows  # row j: weights[j] * rows[j]
    lo = min(float(parts.min()), float(out.min()))
    hi = max(float(parts.max()), float(out.max()))
    scale = {"cmap": "RdBu_r", "vmin": -max(-lo, hi), "vmax": max(-lo, hi)} if diverging else {"vmin": lo, "vmax": hi}
    fig, (ax_p, ax_o) = plt.subplots(
        2, 1, figsize=figsize, height_ratios=[len(row_names), 1], gridspec_kw={"hspace": 0.15}
    )
    labels = [times.format(float(w), name) for w, name in zip(weights, row_names, strict=True)]
    heatmap(ax_p, parts, labels, col_labels, fmt="{:.3f}", **scale)
    ax_p.xaxis.tick_top()
    ax_p.set_title(title)
    heatmap(ax_o, out[None, :], [result], [""] * len(col_labels), fmt="{:.3f}", **scale)
    ax_o.set_xlabel(note)
    return fig


def load_all() -> dict[str, Figure]:
    """Import every figure module in this package so that all figures are registered."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return FIGURES
