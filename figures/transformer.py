"""The "where attention sits" page's figure, drawn from snippets/transformer/stack.py: a tiny
encoder-decoder Transformer with the shape after each stage."""

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from qkvsite.figures import Says, figure, palette, says, words

STACK = "transformer/stack.py"

TEXT = {
    "encoder": ("编码器", "encoder"),
    "decoder": ("解码器", "decoder"),
    "src": ("源词元", "source tokens"),
    "tgt": ("目标词元", "target tokens"),
    "embed": ("嵌入 + 位置", "embedding + position"),
    "self": ("自注意力", "self-attention"),
    "masked": ("带因果掩码的自注意力", "masked self-attention"),
    "cross": ("交叉注意力", "cross-attention"),
    "norm": ("相加并归一化", "add & norm"),
    "mlp": ("MLP {}→{}→{}", "MLP {}→{}→{}"),
    "times": "× {}",
    "memory": ("编码器输出", "encoder output"),
    "logits": ("线性层 → logits", "linear → logits"),
    "kv": ("K、V", "K, V"),
    "note": (
        "形状：(B, L, d_model)，B = {}，d_model = {}，词表 {} 个词元",
        "shapes: (B, L, d_model), B = {}, d_model = {}, vocabulary {}",
    ),
    "residual": ("残差", "residual"),
}

ATTENTION = "#f6c28b"  # the attention boxes: what the chapters are about
BOX_H, GAP = 0.38, 0.16  # inches


def _box(ax, x, y, w, text, shape=None, fill=None):
    """A box centred on x, top at y; returns its bottom."""
    h = BOX_H if shape is None else BOX_H + 0.17
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.05",
            fc=fill or palette()["paper"],
            ec=palette()["ink"],
            lw=1,
        )
    )
    colour = "#222222" if fill else palette()["ink"]
    if shape is None:
        ax.text(x, y + h / 2, text, ha="center", va="center", fontsize=11, color=colour)
    else:
        ax.text(x, y + 0.21, text, ha="center", va="center", fontsize=11, color=colour)
        ax.text(
            x,
            y + h - 0.15,
            str(tuple(shape)),
            ha="center",
            va="center",
            fontsize=10,
            color=palette()["muted"],
        )
    return y + h


def _down(ax, x, y0, y1):
    ax.annotate(
        "",
        (x, y1),
        (x, y0),
        arrowprops={
            "arrowstyle": "-|>",
            "color": palette()["muted"],
            "lw": 1.2,
            "shrinkA": 0,
            "shrinkB": 0,
        },
    )


def _column(ax, x, w, stages, times, times_left=False):
    """Stages top to bottom: (text, shape, fill, in_block, residual); the block's frame and "× N"
    around the stages in_block. Returns {text: (top, bottom)}."""
    y, where, frame, skips = 0.15, {}, [], []
    for i, (key, text, shape, fill, in_block, residual) in enumerate(stages):
        if i:
            _down(ax, x, y, y + GAP)
            y += GAP
        if in_block and not frame:
            y += 0.06
        top = y
        y = _box(ax, x, y, w, text, shape, fill)
        where[key] = (top, y)
        if in_block:
            frame.append((top, y))
        if residual:  # a skip from above the sublayer into the add & norm below it
            skips.append(top - GAP / 2)
        if key.startswith("norm") and skips:
            start = skips.pop()
            side = x - w / 2 - 0.12
            mid = (top + y) / 2
            ax.plot([x, side, side], [start, start, mid], color=palette()["muted"], lw=1)
            ax.annotate(
                "",
                (x - w / 2, mid),
                (side, mid),
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": palette()["muted"],
                    "lw": 1,
                    "shrinkA": 0,
                    "shrinkB": 0,
                },
            )
        if frame and (i + 1 == len(stages) or not stages[i + 1][4]):
            top_f, bottom_f = frame[0][0] - 0.09, y + 0.09
            ax.add_patch(
                FancyBboxPatch(
                    (x - w / 2 - 0.22, top_f),
                    w + 0.44,
                    bottom_f - top_f,
                    boxstyle="round,pad=0,rounding_size=0.08",
                    fc="none",
                    ec=palette()["muted"],
                    lw=1,
                    ls="--",
                )
            )
            tx = x - w / 2 - 0.3 if times_left else x + w / 2 + 0.3
            ax.text(
                tx,
                (top_f + bottom_f) / 2,
                times,
                ha="right" if times_left else "left",
                va="center",
                fontsize=11,
                color=palette()["ink"],
            )
            y += 0.06
            frame = []
    return where, y


@figure("transformer-stack", STACK)
def transformer_stack(ns, lang):
    t = words(TEXT, lang)
    shapes, N, d_model = ns["shapes"], ns["N"], ns["d_model"]
    d_ff = ns["encoder"][0].linear1.out_features
    mlp = t["mlp"].format(d_model, d_ff, d_model)
    times = t["times"].format(N)
    W, w = 5.3, 1.85
    left, right = 1.25, 4.0
    enc = [
        ("src", t["src"], shapes["source tokens"], None, False, False),
        ("embed", t["embed"], shapes["encoder input"], None, False, False),
        ("self", t["self"], None, ATTENTION, True, True),
        ("norm1", t["norm"], None, None, True, False),
        ("mlp", mlp, None, None, True, True),
        ("norm2", t["norm"], None, None, True, False),
        ("memory", t["memory"], shapes["encoder output"], None, False, False),
    ]
    dec = [
        ("tgt", t["tgt"], shapes["target tokens"], None, False, False),
        ("embed", t["embed"], shapes["decoder input"], None, False, False),
        ("masked", t["masked"], None, ATTENTION, True, True),
        ("norm1", t["norm"], None, None, True, False),
        ("cross", t["cross"], None, ATTENTION, True, True),
        ("norm2", t["norm"], None, None, True, False),
        ("mlp", mlp, None, None, True, True),
        ("norm3", t["norm"], None, None, True, False),
        ("logits", t["logits"], shapes["logits"], None, False, False),
    ]
    # the height: laid out once on a throwaway axes
    fig, ax = plt.subplots(figsize=(W, 7))
    ax.set_xlim(0, W)
    ax.set_ylim(7, 0)
    ax.axis("off")
    e, e_bottom = _column(ax, left, w, enc, times, times_left=True)
    d, d_bottom = _column(ax, right, w, dec, times)
    H = max(e_bottom, d_bottom) + 0.5
    fig.set_size_inches(W, H)
    ax.set_ylim(H, 0)
    ax.set_position((0, 0, 1, 1))
    for x, label in [(left, t["encoder"]), (right, t["decoder"])]:
        ax.text(x, 0.02, label, ha="center", va="bottom", fontsize=12, weight="bold")
    ax.set_ylim(H, -0.3)
    # encoder output -> the decoder's cross-attention (its K and V), up the gap between the stacks
    top, bottom = e["memory"]
    c_top, c_bottom = d["cross"]
    y_mem, y_cross = (top + bottom) / 2, (c_top + c_bottom) / 2
    gap = (left + w / 2 + right - w / 2) / 2
    kv = "#d9730d"
    ax.plot([left + w / 2, gap, gap], [y_mem, y_mem, y_cross], color=kv, lw=1.6)
    ax.annotate(
        "",
        (right - w / 2, y_cross),
        (gap, y_cross),
        arrowprops={"arrowstyle": "-|>", "color": kv, "lw": 1.6, "shrinkA": 0, "shrinkB": 0},
    )
    ax.text(
        (left + w / 2 + gap) / 2,
        y_mem - 0.04,
        t["kv"],
        ha="center",
        va="bottom",
        fontsize=10,
        color=kv,
    )
    B = shapes["source tokens"][0]
    ax.text(
        W / 2,
        H - 0.15,
        t["note"].format(B, d_model, ns["vocab"]),
        ha="center",
        va="center",
        fontsize=10,
        color=palette()["muted"],
    )
    return fig


@says("transformer-stack")
def transformer_stack_says(ns):
    """The number of blocks in words, and the layer that gives the logits: an nn.Linear."""
    from torch import nn

    return [
        Says("a dashed block repeated twice", "重复两次的虚线块", holds=ns["N"] == 2),
        Says(
            "a linear layer giving the logits",
            "线性层给出 logits",
            holds=isinstance(ns["to_logits"], nn.Linear),
        ),
    ]
