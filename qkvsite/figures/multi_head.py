"""Chapter 4 figures: the data flow of multi-head attention and per-head weights."""

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from qkvsite.figures import figure, heatmap, palette, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "title": (
        "多头注意力的数据流（$H = {H}$；形状取自一次真实运行）",
        "Data flow of multi-head attention ($H = {H}$; shapes from a real run)",
    ),
    "head": ("第 {} 个头", "head {}"),
    "attention": "$\\mathrm{{softmax}}(Q_{{{0}}} K_{{{0}}}^\\top / \\sqrt{{d_k}})\\, V_{{{0}}}$",
    "concat": (
        "$\\mathrm{{Concat}}(\\mathrm{{head}}_0, \\ldots, \\mathrm{{head}}_{{{}}})$ 拼接",
        "$\\mathrm{{Concat}}(\\mathrm{{head}}_0, \\ldots, \\mathrm{{head}}_{{{}}})$",
    ),
    "output": ("输出", "output"),
    "per_head": ("每个头", "per head"),
    "code": ("代码里（所有头一起算）", "in the code (all heads at once)"),
    "code_rows": (
        [
            "in_proj(x).chunk(3)：3 × {Q}",
            "split_heads：3 × {Q_h}",
            "softmax：weights {weights}",
            "weights @ V_h：{heads}",
            "merge_heads：{merged}",
            "out_proj：{output}",
        ],
        [
            "in_proj(x).chunk(3): 3 × {Q}",
            "split_heads: 3 × {Q_h}",
            "softmax: weights {weights}",
            "weights @ V_h: {heads}",
            "merge_heads: {merged}",
            "out_proj: {output}",
        ],
    ),
    "weights_title": ("第 {0} 个头的权重 $A_{{{1}}}$", "weights $A_{{{1}}}$ of head {0}"),
    "token": ("词元{}", "tok {}"),
    "key": ("被看的词元（key）", "key (token looked at)"),
    "query": ("提问的词元（query）", "query (token asking)"),
}


def label() -> dict:
    """A text's background that hides the arrows behind it: the paper's colour."""
    return {"facecolor": palette()["paper"], "edgecolor": "none", "pad": 1.5}


COLORS = {
    "Q": "#dbe9f6",
    "K": "#fde2c8",
    "V": "#d9f0d3",
    "W": "#f2f2f2",
    "A": "#ece2f0",
}


def shape_text(shape, letters):
    """(2, 5, 12) -> '(B, L, d_model) = (2, 5, 12)'."""
    shape = tuple(shape)
    return "(" + ", ".join(letters[s] for s in shape) + f") = {shape}"


def box(ax, x, y, w, h, text, color="white", **kw):
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=color,
            edgecolor="#555555",
            linewidth=1,
        )
    )
    ax.text(x, y, text, ha="center", va="center", **{"color": "#222222", **kw})  # boxes stay light


def arrow(ax, start, end):
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops={"arrowstyle": "-|>", "color": palette()["muted"], "lw": 0.9},
    )


@figure("multi-head-flow", "multi_head/multi_head_attention.py")
def multi_head_flow(ns, lang):
    t = words(TEXT, lang)
    mha, trace = ns["mha"], ns["trace"]
    B, L, E = trace["X"].shape
    H, d = mha.num_heads, mha.head_dim
    letters = {B: "B", L: "L", E: "d_model", H: "H", d: "d_k"}
    assert len(letters) == 5, "the example needs five different sizes"
    per_head = [trace["Q_h"].shape[i] for i in (0, 2, 3)]  # drop the head dimension
    head_out = [trace["heads"].shape[i] for i in (0, 2, 3)]

    # one data unit = one inch
    fig = plt.figure(figsize=(8.8, 6.3))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 8.8)
    ax.set_ylim(0, 6.3)
    ax.axis("off")
    ax.text(4.4, 6.1, t["title"].format(H=H), ha="center", va="center", fontsize=12)

    left = 6.0  # one column group per head on the left, the code on the right
    small = {"ha": "center", "va": "center", "fontsize": 9.5}
    box(ax, left / 2, 5.5, 3.0, 0.36, "X   " + shape_text(trace["X"].shape, letters))
    group = left / H
    for h in range(H):
        cx = group * (h + 0.5)
        ax.text(cx, 4.98, t["head"].format(h), bbox=label(), zorder=3, **small)
        for j, role in enumerate("QKV"):
            x = cx + (j - 1) * 0.58
            arrow(ax, (left / 2, 5.32), (x, 4.72))
            box(ax, x, 4.55, 0.5, 0.32, f"$W_{{{h}}}^{role}$", COLORS["W"], fontsize=9)
            arrow(ax, (x, 4.39), (x, 3.98))
            box(ax, x, 3.8, 0.5, 0.32, f"${role}_{{{h}}}$", COLORS[role])
            arrow(ax, (x, 3.64), (cx + (j - 1) * 0.3, 3.02))
        ax.text(cx, 3.38, shape_text(per_head, letters), bbox=label(), zorder=3, **small)
        attention = t["attention"].format(h)
        box(ax, cx, 2.75, 1.8, 0.4, attention, COLORS["A"], fontsize=9.5)
        ax.text(cx, 2.2, f"$\\mathrm{{head}}_{{{h}}}$\n" + shape_text(head_out, letters), **small)
        arrow(ax, (cx, 1.97), (left / 2 + (h - (H - 1) / 2) * 0.9, 1.6))
    concat = t["concat"].format(H - 1) + "   " + shape_text(trace["merged"].shape, letters)
    box(ax, left / 2, 1.42, 4.8, 0.36, concat, fontsize=9.5)
    arrow(ax, (left / 2, 1.24), (left / 2, 0.98))
    box(ax, left / 2, 0.82, 0.7, 0.32, "$W^O$", COLORS["W"])
    arrow(ax, (left / 2, 0.66), (left / 2, 0.42))
    output = t["output"] + "   " + shape_text(trace["output"].shape, letters)
    ax.text(left / 2, 0.28, output, ha="center", va="center", fontsize=9.5)

    # right: the same steps as the code runs them, all heads in one tensor
    cx = (left + 8.8) / 2 + 0.05
    ax.text(cx, 4.98, t["code"], **small)
    ax.plot([left + 0.1, left + 0.1], [0.2, 5.15], color=palette()["rule"], lw=0.8, ls="--")
    steps = ["Q", "Q_h", "weights", "heads", "merged", "output"]
    shapes = {k: tuple(trace[k].shape) for k in steps}
    for y, row in zip([4.55, 3.8, 2.75, 2.2, 1.42, 0.82], t["code_rows"], strict=True):
        ax.text(cx, y, row.format(**shapes), **small)
    return fig


@figure("head-weights", "multi_head/head_by_head.py")
def head_weights(ns, lang):
    t = words(TEXT, lang)
    weights = [w.cpu() for w in ns["weights"]]
    L = weights[0].shape[0]
    tokens = [t["token"].format(i) for i in range(L)]
    fig, axes = plt.subplots(1, len(weights), figsize=(3.6 * len(weights), 3.5))
    for h, (ax, w) in enumerate(zip(axes, weights, strict=True)):
        heatmap(ax, w, tokens, tokens, cmap="Purples", vmin=0, vmax=1)
        ax.set_title(t["weights_title"].format(h, h))
        ax.set_xlabel(t["key"])
        ax.set_ylabel(t["query"])
    fig.tight_layout()
    return fig
