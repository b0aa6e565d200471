"""The drawing library of the figures drawn at build time from the values the chapters' examples
compute.

Each chapter module of ``figures/`` (content, beside ``snippets/``) registers drawing functions
with :func:`figure`: one receives the namespace of an example script (its variables after it ran)
and the page language, and returns a matplotlib Figure. The build (``qkvsite.hooks.figures``)
adds every figure in every language to the site; no image file is committed.

Every figure comes in Material's light and dark schemes (``<name>.svg``, ``<name>.dark.svg``).
Drawing code takes its non-data colours from :func:`palette`, never "white" or "black": a figure
is drawn once per language in placeholder colours, and each scheme's file replaces them by the
scheme's (the schemes differ in colours only, never in layout). A placeholder left in a raster
image, where it cannot be replaced, fails the rendering.

Drawings are cached (``qkvsite.figure_cache``: the figures declared, and a key of everything that
can change each drawing). An example runs once for all the figures and languages that use it;
under ``mkdocs serve`` an edited figure module is imported again. ``draw`` draws a list of them:
the build hands each example's figures to a worker process (``qkvsite.workers``).
"""

from __future__ import annotations

import importlib
import io
import re
import sys
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import matplotlib

# figures are laid out (tight_layout, savefig's tight bbox) with the metrics of the SVG they are
# saved as
matplotlib.use("svg")

import matplotlib.pyplot as plt  # noqa: E402

from qkvsite.config import words  # noqa: E402, F401 (the figure modules read their labels with it)
from qkvsite.figure_cache import (  # noqa: E402
    CACHE,
    MODULES,
    SCHEMES,
    SNIPPETS,
    Drawings,
    run_example,  # noqa: E402, F401 (the figure tests use it here)
)
from qkvsite.fonts import setup_fonts  # noqa: E402, F401 (re-exported for the figure modules)

Draw = Callable[[dict, str], "matplotlib.figure.Figure"]

# non-data colours per scheme; dark's paper is Material's slate background, hsl(232, 15%, 14%)
PALETTES = {
    "light": {"paper": "white", "ink": "#222222", "muted": "#5e5e5e", "rule": "lightgrey"},
    "dark": {"paper": "#1e2029", "ink": "#e2e4e9", "muted": "#a9aebb", "rule": "#4a4f5e"},
}
# rcParams a scheme sets: light keeps matplotlib's defaults, dark takes the palette's colour of the
# same role
RC_ROLES = {
    "figure.facecolor": "paper",
    "axes.facecolor": "paper",
    "savefig.facecolor": "paper",
    "legend.facecolor": "paper",
    "text.color": "ink",
    "axes.labelcolor": "ink",
    "xtick.color": "ink",
    "ytick.color": "ink",
    "patch.edgecolor": "ink",
    "axes.edgecolor": "muted",
    "grid.color": "rule",
    "legend.edgecolor": "rule",
}


def _scheme_colours() -> dict[str, dict[str, str]]:
    """Each distinct colour of a scheme (light, dark) with a placeholder: role name or rcParam ->
    colours."""
    colours = {role: {s: PALETTES[s][role] for s in SCHEMES} for role in PALETTES["light"]}
    for key, role in RC_ROLES.items():
        light = matplotlib.rcParamsDefault[key]
        colours[key] = {
            "light": "white" if light in ("auto", "inherit") else light,
            "dark": PALETTES["dark"][role],
        }
    return colours


SCHEME_COLOURS = _scheme_colours()
# unusual colours (a saturated magenta) that the drawing uses in place of the scheme's colours
PLACEHOLDERS = {name: f"#fe01{i:02x}" for i, name in enumerate(SCHEME_COLOURS, start=0x80)}
_drawing = ContextVar("drawing", default=False)


MEASURED_ON = ("测量：{}，{}，torch {}", "Measured on {}, {}, torch {}")


def note_measured_on(fig, ns: dict, lang: str, how: str, fontsize: float = 9) -> None:
    """A measured figure's note, lower right: the GPU or CPU (``ns["device"]``) and torch it was
    measured with."""
    from qkvsite.machine import environment

    env = environment()
    if ns["device"] == "cuda":
        where = env["cuda"]["device"] if env["cuda"] else "CUDA"
    else:
        where = env["cpu"]
    text = words({"note": MEASURED_ON}, lang)["note"].format(where, how, env["torch"])
    fig.text(0.99, 0.01, text, ha="right", va="bottom", fontsize=fontsize, color=palette()["muted"])


def palette() -> dict[str, str]:
    """The non-data colours: paper (background), ink (text), muted (notes), rule (lines).

    While a figure is drawn these are placeholders, replaced by each scheme's colours in its SVG.
    """
    if _drawing.get():
        return {role: PLACEHOLDERS[role] for role in PALETTES["light"]}
    return dict(PALETTES["light"])


def placeholder_style() -> dict:
    """rcParams that draw every scheme-dependent colour as its placeholder."""
    return {key: PLACEHOLDERS[key] for key in RC_ROLES}


def recolour(svg: bytes, scheme: str) -> bytes:
    """The placeholder drawing in the colours of ``scheme``."""
    from matplotlib.colors import to_hex

    text = svg.decode("utf-8")
    for name, placeholder in PLACEHOLDERS.items():
        text = text.replace(placeholder, to_hex(SCHEME_COLOURS[name][scheme]))
    return text.encode("utf-8")


RASTER = re.compile(rb"data:image/png;base64,([A-Za-z0-9+/=\s]+)")


def check_placeholders(svg: bytes, name: str) -> bytes:
    """Every placeholder is where ``recolour`` replaces it: none inside an embedded raster image."""
    import base64

    from PIL import Image

    wanted = {tuple(int(p[i : i + 2], 16) for i in (1, 3, 5)) for p in PLACEHOLDERS.values()}
    for data in RASTER.findall(svg):
        image = Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
        found = {
            colour for _, colour in image.getcolors(maxcolors=image.width * image.height)
        } & wanted
        if found:
            raise ValueError(
                f"figure {name!r} has a scheme colour (palette() or a themed rcParam) inside a "
                "raster image (imshow, pcolormesh with rasterized=True), where no scheme can "
                "recolour it: draw it as a vector patch, or leave the pixels transparent"
            )
    return svg


@dataclass(frozen=True)
class Figure:
    name: str  # file name without extension, e.g. "similarity-matrix"
    example: str  # snippet file it takes its values from, relative to snippets/
    draw: Draw
    measured: bool = False  # it shows times or memory measured on the machine that draws it

    @property
    def module_file(self) -> Path:
        return Path(sys.modules[self.draw.__module__].__file__)


FIGURES: dict[str, Figure] = {}


def figure(name: str, example: str, measured: bool = False) -> Callable[[Draw], Draw]:
    """Register ``draw`` as ``figures/<name>.svg`` in every language, drawn from ``example``;
    ``measured``: it shows times or memory measured on the machine that draws it (its cache key
    holds the machine)."""

    def register(draw: Draw) -> Draw:
        if name in FIGURES:
            raise ValueError(f"figure {name!r} is registered twice")
        if not (SNIPPETS / example).is_file():
            raise FileNotFoundError(f"figure {name!r}: no example snippets/{example}")
        FIGURES[name] = Figure(name, example, draw, measured)
        return draw

    return register


@dataclass(frozen=True)
class Says:
    """A phrase of a figure's caption or alt text, in each edition, written from the values the
    figure is drawn from (its numbers are f-string fields of them); ``holds``, for a trend or a
    bound, whether those values show it."""

    en: str
    zh: str
    holds: bool | None = None


# figure name -> what its caption and alt text state, from the example's namespace
SAYS: dict[str, Callable[[dict], list[Says]]] = {}


def says(name: str) -> Callable:
    """Register ``states(ns) -> list[Says]``: every number, bound and trend the caption and the alt
    text of figure ``name`` state (tests/content/test_captions.py checks them against the page)."""

    def register(states: Callable[[dict], list[Says]]) -> Callable:
        if name in SAYS:
            raise ValueError(f"the caption of figure {name!r} is described twice")
        SAYS[name] = states
        return states

    return register


FONT_FAMILY = re.compile(r"font-family: ?'([^']+)'")


def check_fonts(svg: bytes, name: str) -> bytes:
    """The SVG keeps its text as text: every font it names first must be one the figures are drawn
    with."""
    known = {setup_fonts(), "DejaVu Sans", "DejaVu Sans Mono"}
    unknown = set(FONT_FAMILY.findall(svg.decode())) - known
    if unknown:
        raise ValueError(
            f"figure {name!r} sets text in {', '.join(sorted(unknown))}, which browsers lack"
        )
    return svg


def render_svg(fig: matplotlib.figure.Figure) -> bytes:
    """The figure as SVG, cropped to what it draws (``bbox_inches="tight"``), with no date in it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return buffer.getvalue()


def render(name: str, lang: str, scheme: str = "light", drawings: Drawings | None = None) -> bytes:
    """SVG bytes of figure ``name`` with labels in ``lang``, from the cache (``drawings``' keys)
    when nothing changed."""
    load_all()
    keys = (drawings or Drawings([lang])).keys
    data = CACHE.get(keys[name, lang, scheme])
    if data is not None:
        return data
    drawing = draw_one(name, lang)
    # one drawing gives every scheme: store them all
    svgs = {each: recolour(drawing, each) for each in SCHEMES}
    for each, svg in svgs.items():
        CACHE.put(keys[name, lang, each], svg)
    return svgs[scheme]


def draw(jobs: list[tuple[str, str]]) -> None:
    """Draw each (figure, language) of ``jobs`` into the cache (in a worker process: one example's
    figures)."""
    drawings = Drawings(sorted({lang for _, lang in jobs}))
    for name, lang in jobs:
        render(name, lang, drawings=drawings)


def draw_one(name: str, lang: str) -> bytes:
    """The figure in placeholder colours (``recolour`` gives each scheme's)."""
    setup_fonts()
    spec = FIGURES[name]
    values = run_example(spec.example)
    token = _drawing.set(True)
    try:
        with warnings.catch_warnings(), plt.rc_context(placeholder_style()):
            warnings.simplefilter("error")  # a missing glyph draws a box: fail instead
            return check_placeholders(check_fonts(render_svg(spec.draw(values, lang)), name), name)
    finally:
        _drawing.reset(token)


def heatmap(
    ax, values, row_labels, col_labels, *, fmt="{:.2f}", cmap="Blues", vmin=None, vmax=None
):
    """Annotated heatmap of a 2-D array; each label is white or black by its cell's brightness."""
    values = [[float(v) for v in row] for row in values]
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="equal")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            r, g, b, _ = image.cmap(image.norm(v))
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            ax.text(
                j, i, fmt.format(v), ha="center", va="center", color="white" if dark else "black"
            )
    ax.set_xticks(range(len(col_labels)), col_labels)
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    return image


def row_sums(ax, weights, row_labels, label):
    """One column holding the sum of each row of ``weights`` (1.000 for softmax weights)."""
    heatmap(
        ax,
        weights.sum(dim=-1, keepdim=True),
        row_labels,
        [label],
        fmt="{:.3f}",
        cmap="Greys",
        vmin=0,
        vmax=4,
    )
    ax.xaxis.tick_top()


def weighted_rows(
    weights,
    rows,
    out,
    row_names,
    col_labels,
    *,
    times,
    result,
    title,
    note,
    diverging=False,
    figsize=(6.4, 3.6),
):
    """out = Σⱼ weights[j] · rows[j], drawn as the weighted rows above the row they add up to.

    ``times`` formats a row label from (weight, name); one colour scale covers all cells, centred
    on 0 when ``diverging`` (values of both signs).
    """
    parts = weights[:, None] * rows  # row j: weights[j] * rows[j]
    lo = min(float(parts.min()), float(out.min()))
    hi = max(float(parts.max()), float(out.max()))
    scale = (
        {"cmap": "RdBu_r", "vmin": -max(-lo, hi), "vmax": max(-lo, hi)}
        if diverging
        else {"vmin": lo, "vmax": hi}
    )
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


_loaded: dict[str, int] = {}  # figure module -> mtime of the file it was imported from


def load_all() -> dict[str, Figure]:
    """Import every chapter module of ``figures/``, so that all figures are registered.

    A module whose file changed since it was imported (``mkdocs serve``) is
    imported again, its old figures dropped first.
    """
    for path in sorted(MODULES.glob("*.py")):
        if path.name == "__init__.py":
            continue
        name = f"{MODULES.name}.{path.stem}"
        mtime = path.stat().st_mtime_ns
        if name in sys.modules and _loaded.get(name) == mtime:
            continue
        for figure_name in [f for f, spec in FIGURES.items() if spec.draw.__module__ == name]:
            del FIGURES[figure_name]
        for figure_name in [f for f, states in SAYS.items() if states.__module__ == name]:
            del SAYS[figure_name]
        if name in sys.modules:
            importlib.reload(sys.modules[name])
        else:
            importlib.import_module(name)
        _loaded[name] = mtime
    return FIGURES
