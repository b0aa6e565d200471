"""Chapter 5 figures: where the merged heads lie in memory; splitting heads right and wrong."""

import itertools

import matplotlib.pyplot as plt
import torch
from matplotlib.colors import ListedColormap

from qkvsite.figures import Says, figure, palette, says, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "memory_title": (
        "t 的每个数在内存里的位置（序列 {}）",
        "where each number of t lies in memory (sequence {})",
    ),
    "memory_x": (
        "同一行里：头内每步 +1，换头时跳一大步",
        "along a row: +1 inside a head, a jump between heads",
    ),
    "x": ("x[0]：{} 个词元 × {} 个特征", "x[0]: {} tokens × {} features"),
    "right": (
        "正确：view 成 (1, L, H, d_k) 再 transpose",
        "right: view as (1, L, H, d_k), then transpose",
    ),
    "wrong": ("错误：直接 view 成 (1, H, L, d_k)", "wrong: view as (1, H, L, d_k) directly"),
    "head": ("头 {}", "head {}"),
    "token": ("词元{}", "token {}"),
    "row": ("第 {} 行", "row {}"),
}

SEQUENCE = 0  # the sequence of the batch whose offsets merge-memory shows
HEAD_COLORS = ListedColormap(["#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb"])


def _offsets(t):
    """The offset in memory of each number of sequence SEQUENCE of t (B, L, H, d_k): (L, H·d_k)."""
    _, L, H, d_k = t.shape
    s_b, s_l, s_h, s_c = t.stride()
    return torch.tensor(
        [
            [SEQUENCE * s_b + i * s_l + h * s_h + c * s_c for h in range(H) for c in range(d_k)]
            for i in range(L)
        ]
    )


@figure("merge-memory", "shapes/view_and_reshape.py")
def merge_memory(ns, lang):
    """Sequence SEQUENCE of the transposed heads t (B, L, H, d_k): each cell's offset in memory."""
    t_ = words(TEXT, lang)
    offsets = _offsets(ns["t"])
    L, H, d_k = ns["t"].shape[1:]
    head = torch.arange(H).repeat_interleave(d_k).expand(L, -1)
    fig, ax = plt.subplots(figsize=(5.6, 2.9))
    ax.imshow(head.numpy(), cmap=HEAD_COLORS, vmin=0, vmax=HEAD_COLORS.N - 1)
    for i, row in enumerate(offsets.tolist()):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", color="black")
    for h in range(1, H):
        ax.axvline(h * d_k - 0.5, color=palette()["paper"], lw=4)
    centres = [(h + 0.5) * d_k - 0.5 for h in range(H)]
    ax.set_xticks(centres, [t_["head"].format(h) for h in range(H)])
    ax.set_yticks(range(L), [t_["token"].format(i) for i in range(L)])
    ax.tick_params(length=0, top=True, labeltop=True, bottom=False, labelbottom=False)
    ax.set_xlabel(t_["memory_x"])
    ax.set_title(t_["memory_title"].format(SEQUENCE))
    ax.spines[:].set_visible(False)
    fig.tight_layout()
    return fig


@says("merge-memory")
def merge_memory_says(ns):
    d_k = ns["t"].shape[-1]
    steps = _offsets(ns["t"]).diff(dim=1)  # along each row: one number to the next
    inside = steps[:, [c for c in range(steps.shape[1]) if (c + 1) % d_k]]  # within a head
    between = steps[:, d_k - 1 :: d_k]  # last number of a head to the first of the next
    step = int(inside[0, 0])
    same_inside = bool((inside == step).all())
    return [
        Says(f"sequence {SEQUENCE}", f"序列 {SEQUENCE}"),
        Says(
            "the positions rise by one inside a block and jump from one block to the next",
            "块内逐个加一，换到下一块时跳一大步",
            holds=same_inside and step == 1 and bool((between > step).all()),
        ),
        Says(
            f"the step is {step} inside a head and a jump between heads",
            f"头内的步长是 {step}，换头时却跳了一大步",
            holds=same_inside and bool((between > step).all()),
        ),
    ]


# a cell's colour: the token its number came from, i.e. the row of x it sits in
TOKEN_COLORS = ListedColormap(["#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1"])


@figure("split-heads", "shapes/view_and_reshape.py")
def split_heads(ns, lang):
    t = words(TEXT, lang)
    x, right, wrong = ns["x"][0].cpu(), ns["right"][0].cpu(), ns["wrong"][0].cpu()
    L, d_model = x.shape
    H, _, d_k = right.shape
    tokens = [t["token"].format(i) for i in range(L)]
    heads = ([(h + 0.5) * d_k - 0.5 for h in range(H)], [t["head"].format(h) for h in range(H)])
    fig, axes = plt.subplots(3, 1, figsize=(3.6, 6.0))
    # x above the heads of each split, side by side: head h under the columns of x it should take
    for ax, values, rows, cols, title in (
        (axes[0], x, tokens, ([], []), t["x"].format(L, d_model)),
        (axes[1], torch.cat(list(right), dim=1), tokens, heads, t["right"]),
        (
            axes[2],
            torch.cat(list(wrong), dim=1),
            [t["row"].format(i) for i in range(L)],
            heads,
            t["wrong"],
        ),
    ):
        ax.imshow((values // d_model).numpy(), cmap=TOKEN_COLORS, vmin=0, vmax=TOKEN_COLORS.N - 1)
        for i, row in enumerate(values.tolist()):
            for j, v in enumerate(row):
                # on light cells in every scheme
                ax.text(j, i, str(v), ha="center", va="center", color="black")
        ax.set_xticks(*cols)
        ax.set_yticks(range(L), rows)
        ax.tick_params(length=0, top=True, labeltop=True, bottom=False, labelbottom=False)
        ax.set_title(title)
        ax.spines[:].set_visible(False)
    for ax, h in itertools.product(axes[1:], range(1, H)):  # a gap between the heads
        ax.axvline(h * d_k - 0.5, color=palette()["paper"], lw=4)
    fig.tight_layout()
    return fig


@says("split-heads")
def split_heads_says(ns):
    L, d_model = ns["x"][0].shape
    H = ns["right"].shape[1]
    return [
        Says(f"{L} tokens × {d_model} features", f"{L} 个词元 × {d_model} 个特征"),
        Says("the two heads", "两个头", holds=H == 2),
    ]
