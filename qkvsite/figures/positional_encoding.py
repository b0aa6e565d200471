"""Chapter 6 figures, drawn from snippets/positional_encoding/*.py."""

import math

import matplotlib.pyplot as plt
from matplotlib.colors import SymLogNorm

from qkvsite.figures import figure, palette, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "position": ("位置 pos", "position pos"),
    "dimension": ("维度", "dimension"),
    "pe_title": ("正弦位置编码 PE（{} 个位置 × {} 维）", "Sinusoidal positional encoding PE ({} positions × {} dims)"),
    "columns_title": ("PE 的几列：频率从高到低", "A few columns of PE: from fast to slow"),
    "column": ("维度 {}", "dimension {}"),
    "gram_title": "$\\mathrm{PE}(i) \\cdot \\mathrm{PE}(j)$",
    "p": "i",
    "q": "j",
    "offset": ("偏移 $k = j - i$", "offset $k = j - i$"),
    "dot": "$\\mathrm{PE}(i) \\cdot \\mathrm{PE}(i + k)$",
    "curves_title": ("固定 i，沿着 k 画：三条线重合", "Fix i, plot along k: three curves, one line"),
    "from_p": "$i = {}$",
    "rope_grid_title": ("RoPE：q 放在 i，k 放在 j，$q_i \\cdot k_j$", "RoPE: q placed at i, k at j, $q_i \\cdot k_j$"),
    "m": ("查询位置 i", "query position i"),
    "n": ("键位置 j", "key position j"),
    "rope_offset_title": ("同一组 q、k：分数只随 $i - j$ 变化", "The same q and k: the score follows $i - j$ only"),
    "m_minus_n": "$i - j$",
    "score": "$q_i \\cdot k_j$",
    "not_symmetric": ("$i - j = \\pm {}$：{:+.4f} 与 {:+.4f}", "$i - j = \\pm {}$: {:+.4f} and {:+.4f}"),
    "head": ("头 {}：斜率 {}", "head {}: slope {}"),
    "alibi_title": (
        "ALiBi：每个头加在分数上的偏置（{} 个位置，右上角 = $-\\infty$）",
        "ALiBi: the bias each head adds to its scores ({} positions, $-\\infty$ above the diagonal)",
    ),
    "query": ("查询 i", "query i"),
    "key": ("键 j", "key j"),
    "future": "$-\\infty$",
}

SINUSOIDAL = "positional_encoding/sinusoidal.py"


@figure("pe-sinusoid", SINUSOIDAL)
def sinusoid_matrix(ns, lang):
    t = words(TEXT, lang)
    pe = ns["pe"].cpu().numpy()
    length, d = pe.shape
    fig, (ax_m, ax_c) = plt.subplots(1, 2, figsize=(10.0, 4.4), width_ratios=[1, 1.25])
    image = ax_m.imshow(pe, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    ax_m.set_xlabel(t["dimension"])
    ax_m.set_ylabel(t["position"])
    ax_m.set_title(t["pe_title"].format(length, d), fontsize=10)
    fig.colorbar(image, ax=ax_m, fraction=0.05)
    for column, color in zip([2, 6, 12, 20], ["tab:red", "tab:orange", "tab:green", "tab:blue"], strict=True):
        ax_c.plot(range(length), pe[:, column], color=color, label=t["column"].format(column))
    ax_c.set_xlabel(t["position"])
    ax_c.set_ylim(-1.15, 1.6)
    ax_c.set_title(t["columns_title"], fontsize=10)
    ax_c.legend(loc="upper center", ncols=4, fontsize=8, frameon=False)
    ax_c.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


@figure("pe-dot-product", SINUSOIDAL)
def dot_product(ns, lang):
    t = words(TEXT, lang)
    G = ns["G"].cpu().numpy()
    length = G.shape[0]
    fig, (ax_g, ax_k) = plt.subplots(1, 2, figsize=(10.0, 4.2), width_ratios=[1, 1.3])
    image = ax_g.imshow(G, cmap="viridis", aspect="equal", interpolation="nearest")
    ax_g.set_xlabel(t["q"])
    ax_g.set_ylabel(t["p"])
    ax_g.set_title(t["gram_title"], fontsize=10)
    fig.colorbar(image, ax=ax_g, fraction=0.046)
    styles = [(0, "-", "tab:blue", 5), (20, "--", "tab:orange", 3), (40, ":", palette()["ink"], 2)]
    for p, style, color, width in styles:
        offsets = [q - p for q in range(length)]
        ax_k.plot(offsets, G[p], style, color=color, lw=width, label=t["from_p"].format(p))
    ax_k.set_xlabel(t["offset"])
    ax_k.set_ylabel(t["dot"])
    ax_k.set_title(t["curves_title"], fontsize=10)
    ax_k.axvline(0, color=palette()["muted"], lw=0.8)
    ax_k.legend(loc="upper right", fontsize=9)
    ax_k.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


@figure("rope-scores", "positional_encoding/rope.py")
def rope_scores(ns, lang):
    t = words(TEXT, lang)
    grid, offsets, by_offset = ns["grid"].numpy(), ns["offsets"], ns["by_offset"]
    fig, (ax_g, ax_o) = plt.subplots(1, 2, figsize=(10.0, 4.2), width_ratios=[1, 1.3])
    lim = float(abs(grid).max())
    image = ax_g.imshow(grid, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="equal", interpolation="nearest")
    ax_g.set_xlabel(t["n"])
    ax_g.set_ylabel(t["m"])
    ax_g.set_title(t["rope_grid_title"], fontsize=10)
    fig.colorbar(image, ax=ax_g, fraction=0.046)
    ax_o.plot(offsets, by_offset, "o-", color="tab:purple", ms=3)
    k = 3
    plus, minus = by_offset[offsets.index(k)], by_offset[offsets.index(-k)]
    ax_o.plot([k, -k], [plus, minus], "o", color="tab:red", ms=7)
    ax_o.text(
        0.03,
        0.96,
        t["not_symmetric"].format(k, plus, minus),
        transform=ax_o.transAxes,
        va="top",
        fontsize=9,
        color="tab:red",
        bbox={"facecolor": palette()["paper"], "edgecolor": palette()["rule"]},
    )
    ax_o.set_ylim(top=ax_o.get_ylim()[1] + 0.6)
    ax_o.axvline(0, color=palette()["muted"], lw=0.8)
    ax_o.set_xlabel(t["m_minus_n"])
    ax_o.set_ylabel(t["score"])
    ax_o.set_title(t["rope_offset_title"], fontsize=10)
    ax_o.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


@figure("alibi-bias", "positional_encoding/alibi.py")
def alibi_bias(ns, lang):
    t = words(TEXT, lang)
    bias, slopes = ns["figure_bias"].cpu(), ns["figure_slopes"].tolist()
    heads, length, _ = bias.shape
    finite = bias.masked_fill(bias.isinf(), float("nan"))  # -inf drawn as a hatched cell
    low = float(bias[bias.isfinite()].min())
    cols = 4
    rows = math.ceil(heads / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(9.0, 2.4 * rows + 0.6), layout="constrained")
    cmap = plt.get_cmap("Blues_r").with_extremes(bad="none")  # the axes' paper shows through
    # one colour scale for every head, logarithmic beyond -0.01: the small slopes' biases still show
    norm = SymLogNorm(linthresh=0.01, vmin=low, vmax=0)
    for h, ax in enumerate(axes.flat):
        image = ax.imshow(finite[h].numpy(), cmap=cmap, norm=norm, aspect="equal", interpolation="nearest")
        for i in range(length):
            for j in range(i + 1, length):
                ax.add_patch(
                    plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", ec=palette()["rule"], lw=0)
                )
        corner = float(bias[h, length - 1, 0])  # the farthest key of the last query
        ink = "white" if norm(corner) < 0.5 else "black"  # on a dark cell, white
        ax.text(0, length - 1, f"{corner:.2f}", ha="left", va="center", fontsize=9, color=ink)
        ax.set_title(t["head"].format(h, f"1/{round(1 / slopes[h])}"), fontsize=12)
        ax.set_xticks(range(0, length, 2))
        ax.set_yticks(range(0, length, 2))
        ax.tick_params(labelsize=10, length=0)
        if h % cols == 0:
            ax.set_ylabel(t["query"], fontsize=11)
        if h // cols == rows - 1:
            ax.set_xlabel(t["key"], fontsize=11)
    fig.suptitle(t["alibi_title"].format(length), fontsize=12)
    fig.colorbar(image, ax=axes, fraction=0.02, pad=0.01)
    return fig
