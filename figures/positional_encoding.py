"""Chapter 6 figures, drawn from snippets/positional_encoding/*.py."""

import matplotlib.pyplot as plt
import torch
from matplotlib.colors import SymLogNorm
from matplotlib.patches import Arc

from qkvsite.figures import Says, figure, heatmap, palette, says, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "position": ("位置 pos", "position pos"),
    "dimension": ("维度", "dimension"),
    "pe_title": (
        "正弦位置编码 PE（{} 个位置 × {} 维）",
        "Positional encoding PE ({} positions × {} dims)",
    ),
    "columns_title": ("PE 的几列：频率从高到低", "A few columns of PE: from fast to slow"),
    "gram_title": "$\\mathrm{PE}(i) \\cdot \\mathrm{PE}(j)$",
    "offset": ("偏移 $k = j - i$", "offset $k = j - i$"),
    "dot": "$\\mathrm{PE}(i) \\cdot \\mathrm{PE}(i + k)$",
    "curves_title": (
        "固定 i，沿着 k 画：三条线重合",
        "Fix i, plot along k: three curves, one line",
    ),
    "from_p": "$i = {}$",
    "counter_title": ("二进制计数器", "Binary counter"),
    "bit": ("第几位", "bit"),
    "pe_columns_title": ("PE 的正弦列", "Sine columns of PE"),
    "pair_column": ("第几对 p", "pair p"),
    "rope_pair_title": ("q 在位置 {}，k 在位置 {}", "q at position {}, k at {}"),
    "before": ("虚线：旋转前的 q 和 k", "dotted: q and k before turning"),
    "angle_between": ("夹角 {:.1f}°", "angle {:.1f}°"),
    "rope_grid_title": ("RoPE：q 放在 i，k 放在 j", "RoPE: q placed at i, k at j"),
    "m": ("查询位置 i", "query position i"),
    "n": ("键位置 j", "key position j"),
    "rope_offset_title": ("分数只随 $i - j$ 变化", "The score follows $i - j$ only"),
    "score": "$q \\cdot k$",
    "not_symmetric": (
        "$i - j = \\pm {}$：{:+.4f} 与 {:+.4f}",
        "$i - j = \\pm {}$: {:+.4f} and {:+.4f}",
    ),
    "slope": ("斜率 1/{}", "slope 1/{}"),
    "alibi_title": (
        "ALiBi：每个头的偏置（斜线 = $-\\infty$）",
        "ALiBi: each head's bias (hatched: $-\\infty$)",
    ),
    "query": ("查询 i", "query i"),
    "key": ("键 j", "key j"),
}

SINUSOIDAL = "positional_encoding/sinusoidal.py"
COUNTER = (16, 4)  # Figure 6-1: positions 0-15, bits and pairs 0-3
SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
COLUMNS = (2, 6, 12, 20)  # Figure 6-2: the columns plotted against position, fast to slow
STARTS = (0, 20, 40)  # Figure 6-3: the positions i whose dot products are plotted against k
MARKED = 3  # Figure 6-5: the offsets i - j = ±MARKED marked on the curve (the snippet prints them)


def _matrix_above(values, title, xlabel, ylabel, **style):
    """A heatmap of ``values`` with its colour bar above an empty panel; returns the figure and that
    panel."""
    fig, (ax_m, ax) = plt.subplots(
        2, 1, figsize=(5.8, 7.2), height_ratios=[1.15, 1], layout="constrained"
    )
    fig.colorbar(ax_m.imshow(values, interpolation="nearest", **style), ax=ax_m)
    ax_m.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax_m.locator_params(integer=True)
    ax.grid(True, alpha=0.3)
    return fig, ax


@figure("pe-sinusoid", SINUSOIDAL)
def sinusoid_matrix(ns, lang):
    t = words(TEXT, lang)
    pe = ns["pe"].cpu().numpy()
    length, d = pe.shape
    title = t["pe_title"].format(length, d)
    fig, ax = _matrix_above(
        pe, title, t["dimension"], t["position"], cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto"
    )
    for column, color in zip(
        COLUMNS, ["tab:red", "tab:orange", "tab:green", "tab:blue"], strict=True
    ):
        ax.plot(range(length), pe[:, column], color=color, label=column)
    ax.set(xlabel=t["position"], title=t["columns_title"], ylim=(-1.15, 2.1))
    ax.legend(title=t["dimension"], loc="upper center", ncols=4)
    return fig


EDGE = 4  # Figure 6-2's alt text: the few columns at either edge of the matrix
FAST = 0.25  # a column changing by more than this per position on average (colour scale: 2)
STILL = 0.05  # a column whose values span less than this looks constant
CLOSE = 1e-3  # two dot products or scores this close are drawn as one


@says("pe-sinusoid")
def sinusoid_says(ns):
    pe = ns["pe"].cpu()
    length, d = pe.shape
    omega = ns["frequencies"](d)  # (d/2,): ω_p of pair p
    angle = torch.arange(length)[:, None] * omega
    paired = torch.allclose(pe[:, 0::2], angle.sin(), atol=CLOSE) and torch.allclose(
        pe[:, 1::2], angle.cos(), atol=CLOSE
    )  # columns 2p (sine) and 2p + 1 (cosine) share ω_p
    step = pe.diff(dim=0).abs().mean(dim=0)  # per column: mean change from a position to the next
    span = pe.max(dim=0).values - pe.min(dim=0).values  # per column, over all positions
    pairs = torch.tensor([column // 2 for column in COLUMNS])  # the pairs of the plotted columns
    return [
        Says(f"{length} × {d}", f"{length} × {d}"),
        Says(
            "fast-changing columns on the left and nearly constant ones on the right",
            "左边几列变化很快，右边几列几乎不变",
            holds=bool(step[:EDGE].min() > FAST and span[-EDGE:].max() < STILL),
        ),
        Says(
            "one frequency for each pair of columns (sine, cosine)",
            "每两列（正弦、余弦）共用一个频率",
            holds=paired,
        ),
        Says(
            "from high to low frequency",
            "频率从高到低",
            holds=bool((omega[pairs].diff() < 0).all()),  # four pairs, each slower than the last
        ),
    ]


@figure("pe-binary", SINUSOIDAL)
def binary_counter(ns, lang):
    t = words(TEXT, lang)
    length, n = COUNTER
    pe = ns["pe"].cpu().round(decimals=1) + 0.0  # + 0.0: no "-0.0"
    bits = [[(pos >> b) & 1 for b in range(n)] for pos in range(length)]
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(5.0, 5.6), layout="constrained")
    rows = [str(pos) for pos in range(length)]
    columns = [str(b) for b in range(n)]
    heatmap(ax_b, bits, rows, columns, fmt="{:.0f}", vmin=0, vmax=1.6)
    heatmap(
        ax_p,
        pe[:length, 0 : 2 * n : 2],  # sin(pos ω_p) of pairs p = 0 .. n - 1
        rows,
        columns,
        fmt="{:.1f}",
        cmap="RdBu_r",
        vmin=-1.6,
        vmax=1.6,
    )
    ax_b.set(title=t["counter_title"], xlabel=t["bit"], ylabel=t["position"])
    ax_p.set(title=t["pe_columns_title"], xlabel=t["pair_column"])
    for ax in (ax_b, ax_p):
        ax.xaxis.tick_top()
        ax.xaxis.set_label_position("top")
    return fig


@says("pe-binary")
def binary_counter_says(ns):
    length, n = COUNTER
    positions, pairs = range(length), range(n)
    bits = torch.tensor([[(pos >> b) & 1 for b in pairs] for pos in positions], dtype=torch.float)
    sines = ns["pe"].cpu()[:length, 0 : 2 * n : 2].round(decimals=1)  # the cells as drawn
    # how much each column changes down the positions: less in each next column, on both sides
    slower = all(
        bool((side.diff(dim=0).abs().sum(dim=0).diff() < 0).all()) for side in (bits, sines)
    )
    return [
        Says(f"{positions[0]} to {positions[-1]}", f"{positions[0]} 到 {positions[-1]}"),
        Says(f"pairs {pairs[0]} to {pairs[-1]}", f"第 {pairs[0]} 到 {pairs[-1]} 对"),
        Says(
            "the left column changes fastest and each next column more slowly",
            "最左一列变化最快，往右每一列都变得更慢",
            holds=slower,
        ),
    ]


@figure("pe-dot-product", SINUSOIDAL)
def dot_product(ns, lang):
    t = words(TEXT, lang)
    G = ns["G"].cpu().numpy()
    fig, ax = _matrix_above(G, t["gram_title"], "j", "i", cmap="viridis")
    styles = [("-", "tab:blue", 5), ("--", "tab:orange", 3), (":", palette()["ink"], 2)]
    for p, (style, color, width) in zip(STARTS, styles, strict=True):
        offsets = [q - p for q in range(len(G))]
        ax.plot(offsets, G[p], style, color=color, lw=width, label=t["from_p"].format(p))
    ax.set(xlabel=t["offset"], ylabel=t["dot"], title=t["curves_title"])
    ax.axvline(0, color=palette()["muted"], lw=0.8)
    ax.legend(loc="upper right")
    return fig


@says("pe-dot-product")
def dot_product_says(ns):
    G = ns["G"].cpu()
    n = len(G)
    diagonals = [G.diagonal(k) for k in range(1 - n, n)]
    constant = all(bool((d - d[0]).abs().max() < CLOSE) for d in diagonals)
    curves = {}  # offset k -> the dot products the curves of STARTS draw at k
    for p in STARTS:
        for q in range(n):
            curves.setdefault(q - p, []).append(float(G[p, q]))
    at = {k: sum(values) / len(values) for k, values in curves.items()}
    coincide = all(max(v) - min(v) < CLOSE for v in curves.values())
    centre = max(at, key=at.get)  # the offset where the curves peak
    mirrored = all(
        abs(at[centre + k] - at[centre - k]) < CLOSE
        for k in range(1, n)
        if centre + k in at and centre - k in at
    )
    return [
        Says(f"{n} × {n}", f"{n} × {n}"),
        Says("constant along every diagonal", "沿对角线方向颜色不变", holds=constant),
        Says("the three curves coincide", "完全重合", holds=coincide),
        Says(f"symmetric about k = {centre}", f"关于 k = {centre} 对称", holds=mirrored),
        Says(f"symmetric about $k = {centre}$", f"关于 $k = {centre}$ 左右对称", holds=mirrored),
    ]


@figure("rope-scores", "positional_encoding/rope.py")
def rope_scores(ns, lang):
    t = words(TEXT, lang)
    grid, offsets, by_offset = ns["grid"].numpy(), ns["offsets"], ns["by_offset"]
    lim = float(abs(grid).max())
    fig, ax = _matrix_above(
        grid, t["rope_grid_title"], t["n"], t["m"], cmap="RdBu_r", vmin=-lim, vmax=lim
    )
    ax.plot(offsets, by_offset, "o-", color="tab:purple", ms=3)
    k = MARKED
    plus, minus = by_offset[offsets.index(k)], by_offset[offsets.index(-k)]
    ax.plot([k, -k], [plus, minus], "o", color="tab:red", ms=7)
    note = t["not_symmetric"].format(k, plus, minus)
    ax.text(
        0.02,
        0.96,
        note,
        transform=ax.transAxes,
        va="top",
        color="tab:red",
        backgroundcolor=palette()["paper"],
    )
    ax.set_ylim(top=ax.get_ylim()[1] + 0.7)
    ax.axvline(0, color=palette()["muted"], lw=0.8)
    ax.set(xlabel="$i - j$", ylabel=t["score"], title=t["rope_offset_title"])
    return fig


@says("rope-scores")
def rope_scores_says(ns):
    grid, offsets, by_offset = ns["grid"], ns["offsets"], ns["by_offset"]
    n = len(grid)
    constant = all(
        bool((d - d[0]).abs().max() < CLOSE) for d in (grid.diagonal(k) for k in range(1 - n, n))
    )
    plus, minus = by_offset[offsets.index(MARKED)], by_offset[offsets.index(-MARKED)]
    apart = abs(plus - minus) > CLOSE
    return [
        Says(f"{n} × {n}", f"{n} × {n}"),
        Says("constant along every diagonal", "沿对角线颜色不变", holds=constant),
        Says(
            f"i − j = {MARKED} and −{MARKED} at different heights",
            f"i − j = {MARKED} 与 −{MARKED} 处的两个点高度不同",
            holds=apart,
        ),
        Says(f"$i - j = \\pm {MARKED}$", f"$i - j = \\pm {MARKED}$"),
        Says("the curve is not symmetric", "曲线不对称", holds=apart),
    ]


@figure("rope-rotation", "positional_encoding/rope.py")
def rope_rotation(ns, lang):
    t = words(TEXT, lang)
    rope, direction, device = ns["rope"], ns["direction"], ns["device"]
    q, k = ns["pair_q"], ns["pair_k"]
    fig, axes = plt.subplots(1, 2, figsize=(5.8, 3.2), layout="constrained")
    ink, muted = palette()["ink"], palette()["muted"]
    for ax, (i, j) in zip(axes, ns["placements"], strict=True):
        q_i = rope(q, torch.tensor([i], device=device)).cpu()
        k_j = rope(k, torch.tensor([j], device=device)).cpu()
        ax.add_patch(plt.Circle((0, 0), 1, fill=False, color=palette()["rule"]))
        for v, color, style in [
            (q.cpu(), "tab:blue", ":"),
            (k.cpu(), "tab:orange", ":"),
            (q_i, "tab:blue", "-"),
            (k_j, "tab:orange", "-"),
        ]:
            x, y = float(v[0, 0]), float(v[0, 1])
            ax.annotate(
                "",
                (x, y),
                (0, 0),
                arrowprops={"arrowstyle": "-|>", "color": color, "ls": style, "lw": 2},
            )
        for v, label, color in [
            (q_i, "q" + str(i).translate(SUB), "tab:blue"),
            (k_j, "k" + str(j).translate(SUB), "tab:orange"),
        ]:
            ax.text(
                *(1.2 * v[0]).tolist(), label, color=color, ha="center", va="center", fontsize=12
            )
        start, end = direction(q_i), direction(k_j)
        ax.add_patch(Arc((0, 0), 0.7, 0.7, theta1=start, theta2=end, color=ink, lw=1.2))
        ax.set_title(t["rope_pair_title"].format(i, j), fontsize=11)
        ax.set_xlabel(t["angle_between"].format((end - start) % 360), color=ink)
        ax.set(xlim=(-1.4, 1.4), ylim=(-1.4, 1.4), aspect="equal", xticks=[], yticks=[])
        for spine in ax.spines.values():
            spine.set_color(muted)
    fig.supxlabel(t["before"], color=muted, fontsize=11)
    return fig


@says("rope-rotation")
def rope_rotation_says(ns):
    rope, direction, device = ns["rope"], ns["direction"], ns["device"]
    (i1, j1), (i2, j2) = ns["placements"]
    angles = []  # from q to k, as each panel marks it
    for i, j in ns["placements"]:
        q_i = rope(ns["pair_q"], torch.tensor([i], device=device))
        k_j = rope(ns["pair_k"], torch.tensor([j], device=device))
        angles.append((direction(k_j) - direction(q_i)) % 360)
    same_angle = abs(angles[0] - angles[1]) < CLOSE
    moved = i2 - i1 == j2 - j1 > 0  # both moved on, by the same number of positions
    return [
        Says(f"q at position {i1} and k at position {j1}", f"q 在位置 {i1}、k 在位置 {j1}"),
        Says(f"q at position {i2} and k at position {j2}", f"q 在位置 {i2}、k 在位置 {j2}"),
        Says(
            "both turned further, with the same angle between them",
            "两者都转得更远，夹角不变",
            holds=moved and same_angle,
        ),
        Says(
            "when both move by the same amount the angle between them stays the same",
            "两者挪动同样多时，夹角保持不变",
            holds=moved and same_angle,
        ),
    ]


@figure("alibi-bias", "positional_encoding/alibi.py")
def alibi_bias(ns, lang):
    t = words(TEXT, lang)
    bias, slopes = ns["figure_bias"].cpu(), ns["figure_slopes"].tolist()
    length = bias.shape[1]
    finite = bias.masked_fill(bias.isinf(), float("nan"))  # -inf drawn as a hatched staircase
    future = [(i + 0.5, i + d) for i in range(length - 1) for d in (-0.5, 0.5)]
    future += [(length - 0.5, length - 1.5), (length - 0.5, -0.5)]
    fig, axes = plt.subplots(
        2, 4, figsize=(5.8, 3.9), sharex=True, sharey=True, layout="constrained"
    )
    cmap = plt.get_cmap("Blues_r").with_extremes(bad="none")  # the axes' paper shows through
    # one colour scale for every head, logarithmic beyond -0.01: the small slopes' biases still show
    norm = SymLogNorm(linthresh=0.01, vmin=float(bias[bias.isfinite()].min()), vmax=0)
    for h, ax in enumerate(axes.flat):
        image = ax.imshow(finite[h].numpy(), cmap=cmap, norm=norm, interpolation="nearest")
        ax.add_patch(plt.Polygon(future, fill=False, hatch="///", ec=palette()["rule"], lw=0))
        # the farthest key of the last query; on a dark cell, white
        corner = float(bias[h, length - 1, 0])
        ax.text(
            0,
            length - 1,
            f"{corner:.2f}",
            va="center",
            fontsize=9,
            color="white" if norm(corner) < 0.5 else "black",
        )
        ax.set_title(t["slope"].format(round(1 / slopes[h])))
        ax.set_xticks(range(0, length, 3))
        ax.tick_params(length=0)
    axes[0, 0].set_yticks(range(0, length, 3))
    fig.supxlabel(t["key"])
    fig.supylabel(t["query"])
    fig.suptitle(t["alibi_title"])
    fig.colorbar(image, ax=axes, format="{x:g}")
    return fig


STRONG, ALIKE = 0.1, 0.95  # exp(bias) of the farthest pair: strongly down-weighted, almost not


@says("alibi-bias")
def alibi_bias_says(ns):
    bias, slopes = ns["figure_bias"].cpu(), ns["figure_slopes"].cpu()
    heads, length = bias.shape[0], bias.shape[1]
    diagonal = bias.diagonal(dim1=-2, dim2=-1)
    seen = torch.ones(length, length, dtype=torch.bool).tril()  # keys up to the query: finite
    # one step right along a row, one step down a column, within the finite cells
    rightwards, downwards = bias.diff(dim=-1)[:, seen[:, 1:]], bias.diff(dim=-2)[:, seen[:-1]]
    lower_left = bool((rightwards > 0).all() and (downwards < 0).all())  # more negative there
    below = seen.tril(-1)  # keys before the query
    order = slopes.argsort()  # smallest slope first
    paler = bool((bias[order][:, below].diff(dim=0) < 0).all())  # each cell nearer 0, smaller slope
    farthest = bias[:, -1, 0].exp()  # the weight factor of the farthest key, per head
    return [
        Says(f"the {heads} heads", f"{heads} 个小热力图"),
        Says(f"one {length} × {length} bias matrix", f"{length} × {length} 的偏置矩阵"),
        Says(
            "zero on the diagonal",
            f"对角线为 {float(diagonal.abs().max()):g}",
            holds=bool((diagonal == 0).all()),
        ),
        Says("more negative towards the lower left", "越往左下越负", holds=lower_left),
        Says("paler for heads with smaller slopes", "斜率越小的头颜色越浅", holds=paler),
        Says(
            "Heads with a large slope strongly favour the nearest tokens; heads with a small"
            " slope treat near and far almost alike",
            "斜率大的头强烈偏向最近的词元，斜率小的头对远近几乎一视同仁",
            holds=bool(farthest[slopes.argmax()] < STRONG and farthest[slopes.argmin()] > ALIKE),
        ),
    ]
