"""Chapter 2 figures, drawn from snippets/qkv/projections.py and cross_attention.py."""

import matplotlib.pyplot as plt
from matplotlib.patches import ConnectionPatch, Rectangle

from qkvsite.figures import figure, heatmap, palette, words

SELF = "qkv/projections.py"
CROSS = "qkv/cross_attention.py"

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "token": ("词元 {}", "token {}"),
    "x_title": ("X：输入，每行一个词元（{}×{}）", "X: input, one row per token ({}×{})"),
    "w_title": ("× ${}$（{}×{}）", "× ${}$ ({}×{})"),
    "out_title": ("${0} = X {1}$（{2}×{3}）", "${0} = X {1}$ ({2}×{3})"),
    "note": (
        "三条箭头互相独立：Q、K、V 都直接由 X 算出，彼此不依赖。\n"
        "三者的行数都等于 X 的行数 {}；列数各由自己的 W 决定。",
        "Three independent arrows: Q, K and V are each computed from X directly.\n"
        "All three have X's {} rows; each W sets its own number of columns.",
    ),
    "s_title": ("$S = Q K^\\top / \\sqrt{{d_k}}$（{}×{}）", "$S = Q K^\\top / \\sqrt{{d_k}}$ ({}×{})"),
    "a_title": ("A = softmax(S, dim=-1)（{}×{}）", "A = softmax(S, dim=-1) ({}×{})"),
    "s_note": (
        "行 $i$：$q_i$ 去比较每个 $k_j$；方框里的 $S[{0}, {1}] \\neq S[{1}, {0}]$",
        "row $i$: $q_i$ against every $k_j$; boxed: $S[{0}, {1}] \\neq S[{1}, {0}]$",
    ),
    "dec": ("解码器 {}", "decoder {}"),
    "enc": ("编码器 {}", "encoder {}"),
    "ca_title": (
        "$A = \\mathrm{{softmax}}(Q K^\\top / \\sqrt{{d_k}})$（{}×{}）",
        "$A = \\mathrm{{softmax}}(Q K^\\top / \\sqrt{{d_k}})$ ({}×{})",
    ),
    "v_title": ("V：来自编码器（{}×{}）", "V: from the encoder ({}×{})"),
    "o_title": ("输出 $A V$（{}×{}）", "output $A V$ ({}×{})"),
    "ca_sources": (
        "Q（{}×{}）：来自解码器\nK（{}×{}）：来自编码器输出\nV（{}×{}）：来自编码器输出",
        "Q ({}×{}): from the decoder\nK ({}×{}): from the encoder output\nV ({}×{}): from the encoder output",
    ),
    "ca_note": (
        "输出的行数跟着 Q（解码器），列数跟着 V",
        "The output has the rows of Q (decoder) and the columns of V",
    ),
}


def _rows(prefix, n):
    """q₀, q₁, ... in mathtext."""
    return [f"${prefix}_{{{i}}}$" for i in range(n)]


def _signed(ax, values, rows, cols=None, fontsize=8):
    """Heatmap of a signed matrix: blue negative, red positive, 0 white."""
    values = values.detach().cpu()
    vmax = float(values.abs().max())
    heatmap(
        ax,
        values,
        rows,
        cols if cols is not None else [""] * values.shape[1],
        cmap="RdBu_r",
        vmin=-vmax,
        vmax=vmax,
    )
    for text, v in zip(ax.texts, values.flatten().tolist(), strict=True):
        text.set_fontsize(fontsize)
        text.set_color("white" if abs(v) > 0.6 * vmax else "black")
        if text.get_text() == "-0.00":
            text.set_text("0.00")


def _canvas(total_w, total_h, cell):
    """A figure measured in matrix cells, and a function placing axes in it."""
    fig = plt.figure(figsize=(total_w * cell, total_h * cell))

    def axes(x, y, w, h):  # x, y: top-left corner, all in cells
        return fig.add_axes([x / total_w, 1 - (y + h) / total_h, w / total_w, h / total_h])

    return fig, axes


def _arrow(fig, ax_from, ax_to, start, end):
    fig.add_artist(
        ConnectionPatch(
            start,
            end,
            coordsA=ax_from.transAxes,
            coordsB=ax_to.transAxes,
            arrowstyle="-|>",
            mutation_scale=16,
            linewidth=1.6,
            color=palette()["muted"],
        )
    )


@figure("qkv-projections", SELF)
def qkv_projections(ns, lang):
    t = words(TEXT, lang)
    X = ns["X"].detach().cpu()
    n, d_model = X.shape
    branches = [
        ("Q", "W^Q", ns["w_q"].weight.T, ns["Q"]),
        ("K", "W^K", ns["w_k"].weight.T, ns["K"]),
        ("V", "W^V", ns["w_v"].weight.T, ns["V"]),
    ]
    # every matrix cell is the same square; X feeds three parallel branches
    cell, gap, left = 0.4, 1.5, 1.2
    widths = [w.shape[1] for _, _, w, _ in branches]
    total_w = left + sum(widths) + gap * (len(widths) - 1) + 0.4
    top, arrow1, arrow2, bottom = 1.3, 2.8, 2.2, 2.6
    total_h = top + n + arrow1 + d_model + arrow2 + n + bottom
    fig, axes = _canvas(total_w, total_h, cell)
    starts = [left + sum(widths[:k]) + gap * k for k in range(len(widths))]
    x_left = starts[1] + widths[1] / 2 - d_model / 2
    ax_x = axes(x_left, top, d_model, n)
    _signed(ax_x, X, [t["token"].format(i) for i in range(n)], fontsize=9)
    ax_x.set_title(t["x_title"].format(n, d_model), fontsize=11)

    w_top = top + n + arrow1
    out_top = w_top + d_model + arrow2
    for (name, w_name, W, out), x0, width in zip(branches, starts, widths, strict=True):
        ax_w = axes(x0, w_top, width, d_model)
        _signed(ax_w, W, [""] * d_model)
        ax_w.set_title(t["w_title"].format(w_name, *W.shape), fontsize=11)
        ax_o = axes(x0, out_top, width, n)
        _signed(ax_o, out, _rows(name.lower(), n), fontsize=9)
        ax_o.set_title(t["out_title"].format(name, w_name, *out.shape), fontsize=11)
        # one arrow from X to each W: three parallel branches, not a chain
        _arrow(fig, ax_x, ax_w, (0.5, -0.04), (0.5, 1.0 + 1.2 / d_model))
        _arrow(fig, ax_w, ax_o, (0.5, -0.02), (0.5, 1.0 + 1.2 / n))
    fig.text(
        0.5,
        0.8 / total_h,
        t["note"].format(n),
        ha="center",
        va="bottom",
        fontsize=10.5,
    )
    return fig


@figure("qkv-scores", SELF)
def qkv_scores(ns, lang):
    t = words(TEXT, lang)
    S, A = ns["S"].detach().cpu(), ns["A"].detach().cpu()
    n = S.shape[0]
    fig, (ax_s, ax_a) = plt.subplots(1, 2, figsize=(8.4, 3.6))
    _signed(ax_s, S, _rows("q", n), _rows("k", n), fontsize=10)
    ax_s.set_title(t["s_title"].format(*S.shape))
    heatmap(
        ax_a,
        A,
        _rows("q", n),
        _rows("k", n),
        fmt="{:.3f}",
        cmap="Oranges",
        vmin=0,
        vmax=1,
    )
    ax_a.set_title(t["a_title"].format(*A.shape))
    i, j = 0, 2
    for r, c in [(i, j), (j, i)]:
        ax_s.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, lw=2.2, ec="black"))
    for ax in (ax_s, ax_a):
        ax.xaxis.tick_top()
    fig.text(0.5, 0.02, t["s_note"].format(i, j), ha="center", fontsize=10.5)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


@figure("cross-attention", CROSS)
def cross_attention(ns, lang):
    t = words(TEXT, lang)
    Q, K, V = (ns[k].detach().cpu() for k in "QKV")
    A, out = ns["A"].detach().cpu(), ns["out"].detach().cpu()
    n_q, n_kv = A.shape
    d_v = V.shape[1]
    dec = [t["dec"].format(i) for i in range(n_q)]
    # A @ V = out laid out like a written multiplication: V above out, A left of out
    left, gap, top, middle, bottom = 3.0, 1.0, 1.4, 1.9, 2.6
    total_w = left + n_kv + gap + d_v + 0.3
    total_h = top + n_kv + middle + n_q + bottom
    fig, axes = _canvas(total_w, total_h, cell=0.45)
    ax_v = axes(left + n_kv + gap, top, d_v, n_kv)
    ax_a = axes(left, top + n_kv + middle, n_kv, n_q)
    ax_o = axes(left + n_kv + gap, top + n_kv + middle, d_v, n_q)
    _signed(ax_v, V, [t["enc"].format(j) for j in range(n_kv)], fontsize=9.5)
    ax_v.set_title(t["v_title"].format(*V.shape), fontsize=11)
    heatmap(ax_a, A, dec, [str(j) for j in range(n_kv)], cmap="Oranges", vmin=0)
    ax_a.set_title(t["ca_title"].format(n_q, n_kv), fontsize=11)
    ax_a.set_xlabel(t["enc"].format("j"))
    _signed(ax_o, out, [""] * n_q, fontsize=9.5)
    ax_o.set_title(t["o_title"].format(*out.shape), fontsize=11)
    for text in ax_a.texts:
        text.set_fontsize(9.5)
    fig.text(
        left / total_w,
        1 - (top + 1) / total_h,
        t["ca_sources"].format(*Q.shape, *K.shape, *V.shape),
        va="top",
        fontsize=11,
        linespacing=1.8,
    )
    fig.text(0.5, 0.15 / total_h, t["ca_note"], ha="center", va="bottom", fontsize=10.5)
    return fig
