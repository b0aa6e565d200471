"""Chapter 4 figures: the data flow of multi-head attention and per-head weights."""

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import FancyBboxPatch

from qkvsite.figures import Says, figure, heatmap, palette, says, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "head": ("第 {} 个头", "head {}"),
    "attention": "$\\mathrm{{softmax}}(Q_{0} K_{0}^\\top / \\sqrt{{d_k}})\\, V_{0}$",
    "concat": "$\\mathrm{{Concat}}(\\mathrm{{head}}_0, \\ldots, \\mathrm{{head}}_{})$",
    "output": ("输出", "output"),
    "code": ("代码里：\n所有头一起算", "in the code:\nall heads at once"),
    "weights_title": ("第 {0} 个头的权重 $A_{1}$", "weights $A_{1}$ of head {0}"),
    "key": ("被看的词元（key）", "key (token looked at)"),
    "query": ("提问的词元（query）", "query (token asking)"),
}
# the steps of the batched code (section 4.4) and the traced tensor whose shape each gives
CODE = [
    ("in_proj(x).chunk(3)", "3 × {Q}"),
    ("split_heads", "3 × {Q_h}"),
    ("softmax", "weights {weights}"),
    ("weights @ V_h", "{heads}"),
    ("merge_heads", "{merged}"),
    ("out_proj", "{output}"),
]
COLORS = {"Q": "#dbe9f6", "K": "#fde2c8", "V": "#d9f0d3", "W": "#f2f2f2", "A": "#ece2f0"}
SUB = 13  # text with a subscript ($W_0^Q$): mathtext sets it at 70%, 9 pt
FRONT = 0  # multi-head-flow: the head whose card is in front (drawn last), its formula written out
COUNT = {2: ("两", "two"), 3: ("三", "three")}  # how the alt texts write a number of heads


def shape_text(shape, letters):
    """(2, 5, 12) -> '(B, L, d_model) = (2, 5, 12)'."""
    shape = tuple(shape)
    return "(" + ", ".join(letters[s] for s in shape) + f") = {shape}"


def box(ax, x, y, w, h, text="", color="#ffffff", edge="#555555", **kw):
    """A rounded box centred on x, y; it stays light in the dark scheme unless ``color`` is a
    palette() colour."""
    style = "round,pad=0,rounding_size=0.06"
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2), w, h, boxstyle=style, facecolor=color, edgecolor=edge
        )
    )
    ax.text(x, y, text, ha="center", va="center", **{"color": "#222222", "fontsize": SUB, **kw})


def arrow(ax, start, end):
    ax.annotate(
        "", end, start, arrowprops={"arrowstyle": "-|>", "color": palette()["muted"], "lw": 1}
    )


@figure("multi-head-flow", "multi_head/multi_head_attention.py")
def multi_head_flow(ns, lang):
    t = words(TEXT, lang)
    mha, trace = ns["mha"], ns["trace"]
    B, L, E = trace["X"].shape
    H, d = mha.num_heads, mha.head_dim
    letters = {B: "B", L: "L", E: "d_model", H: "H", d: "d_k"}
    assert len(letters) == 5, "the example needs five different sizes"

    # one data unit = one inch, y down; left: head 0 as the formula writes it, the other heads
    # stacked behind it
    fig = plt.figure(figsize=(5.5, 6.3))
    ax = fig.add_axes((0, 0, 1, 1), xlim=(0, 5.5), ylim=(6.3, 0))
    ax.axis("off")
    cx, card, step = (
        1.65,
        3.0,
        0.24,
    )  # centre of head 0's card, its width, the offset of each card behind
    mid = cx + (H - 1) * step / 2  # centre of the stack of cards: X, Concat, W^O and the output
    centred = {"ha": "center", "va": "center"}
    box(ax, mid, 0.25, 2.7, 0.36, "X   " + shape_text(trace["X"].shape, letters), fontsize=11)
    for h in reversed(range(H)):
        x, top = cx + h * step, 1.25 - h * step
        box(ax, x, top + 1.45, card, 2.9, color=palette()["paper"], edge=palette()["muted"])
        ax.text(x + card / 2 - 0.08, top + 0.14, t["head"].format(h), ha="right", va="center")
    for j, role in enumerate("QKV"):
        x = cx + (j - 1) * 0.8
        arrow(ax, (mid, 0.43), (x, 1.56))
        box(ax, x, 1.75, 0.55, 0.38, f"$W_{FRONT}^{role}$", COLORS["W"])
        arrow(ax, (x, 1.94), (x, 2.26))
        box(ax, x, 2.45, 0.55, 0.38, f"${role}_{FRONT}$", COLORS[role])
        arrow(ax, (x, 2.64), (cx + (j - 1) * 0.4, 2.93))
    box(ax, cx, 3.15, 2.5, 0.44, t["attention"].format(FRONT), COLORS["A"])
    arrow(ax, (cx, 3.37), (cx, 3.56))
    ax.text(cx, 3.7, f"$\\mathrm{{head}}_{FRONT}$", fontsize=SUB, **centred)
    ax.text(cx, 3.97, shape_text([trace["heads"].shape[i] for i in (0, 2, 3)], letters), **centred)
    arrow(ax, (mid, 4.15), (mid, 4.4))
    box(ax, mid, 4.6, 2.6, 0.4, t["concat"].format(H - 1))
    ax.text(mid, 4.95, shape_text(trace["merged"].shape, letters), **centred)
    arrow(ax, (mid, 5.1), (mid, 5.3))
    box(ax, mid, 5.48, 0.7, 0.36, "$W^O$", COLORS["W"])
    arrow(ax, (mid, 5.66), (mid, 5.88))
    output = t["output"] + "   " + shape_text(trace["output"].shape, letters)
    ax.text(mid, 6.05, output, **centred)

    # right: the same steps as the code runs them, all heads in one tensor
    ax.plot([3.85, 3.85], [0.1, 6.2], color=palette()["rule"], lw=0.8, ls="--")
    ax.text(3.95, 0.25, t["code"], va="center", linespacing=1.4)
    shapes = {
        k: tuple(trace[k].shape) for k in ["Q", "Q_h", "weights", "heads", "merged", "output"]
    }
    for y, (code, shape) in zip([1.75, 2.45, 3.15, 3.82, 4.6, 5.48], CODE, strict=True):
        ax.text(3.95, y, code + "\n" + shape.format(**shapes), va="center", linespacing=1.4)
    return fig


@says("multi-head-flow")
def multi_head_flow_says(ns):
    H = ns["mha"].num_heads
    zh, en = COUNT[H]
    return [
        Says(
            f"the {en} heads are drawn as stacked cards, head {FRONT} in front",
            f"{zh}个头画成叠在一起的卡片，第 {FRONT} 个头在最前",
        ),
    ]


@figure("head-weights", "multi_head/head_by_head.py")
def head_weights(ns, lang):
    t = words(TEXT, lang)
    weights = [w.cpu() for w in ns["weights"]]
    tokens = range(len(weights[0]))
    fig, axes = plt.subplots(1, len(weights), figsize=(5.8, 3.3), sharey=True)
    for h, (ax, w) in enumerate(zip(axes, weights, strict=True)):
        heatmap(ax, w, tokens, tokens, cmap="Purples", vmin=0, vmax=1)
        ax.set_title(t["weights_title"].format(h, h))
        ax.set_xlabel(t["key"])
    axes[0].set_ylabel(t["query"])
    fig.tight_layout()
    return fig


@says("head-weights")
def head_weights_says(ns):
    weights = [w.cpu() for w in ns["weights"]]
    L = len(weights[0])
    heads = range(len(weights))
    en, zh = " and ".join(f"head {h}" for h in heads), "和".join(f"第 {h} 个头" for h in heads)
    return [
        Says(
            f"{L}×{L} heat maps: the attention weights that {en} compute from the same X",
            f"{L}×{L} 热力图，分别是{zh}对同一个 X 算出的注意力权重",
        ),
        Says(
            f"the {COUNT[len(weights)][1]} tables hold different values",
            f"{COUNT[len(weights)][0]}张表的数值不同",
            holds=not any(torch.allclose(a, b) for a, b in zip(weights, weights[1:], strict=False)),
        ),
    ]
