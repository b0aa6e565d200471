"""Chapter 5 figure: splitting heads the right way and the wrong way."""

import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from qkvsite.figures import figure, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "x": ("x[0]：{} 个词元 × {} 个特征", "x[0]: {} tokens × {} features"),
    "right": ("正确：view 成 (1, L, H, d_k) 再 transpose", "right: view as (1, L, H, d_k), then transpose"),
    "wrong": ("错误：直接 view 成 (1, H, L, d_k)", "wrong: view as (1, H, L, d_k) directly"),
    "head": ("头 {}", "head {}"),
    "token": ("词元{}", "token {}"),
    "row": ("第 {} 行", "row {}"),
    "feature": ("特征{}", "feat. {}"),
    "legend": ("格子的颜色 = 这个数来自哪个词元", "cell colour = the token the number came from"),
}

TOKEN_COLORS = ["#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1"]


def _grid(ax, values, E, row_labels, col_labels, title):
    """Cells coloured by the token each number came from (value // E)."""
    values = values.tolist()
    tokens = [[v // E for v in row] for row in values]
    cmap = ListedColormap(TOKEN_COLORS)
    ax.imshow(tokens, cmap=cmap, vmin=0, vmax=len(TOKEN_COLORS) - 1, aspect="equal")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center")
    ax.set_xticks(range(len(col_labels)), col_labels, fontsize=9)
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.tick_params(length=0)
    ax.set_title(title, fontsize=10)
    for spine in ax.spines.values():
        spine.set_visible(False)


@figure("split-heads", "shapes/view_and_reshape.py")
def split_heads(ns, lang):
    t = words(TEXT, lang)
    x, right, wrong = ns["x"][0].cpu(), ns["right"][0].cpu(), ns["wrong"][0].cpu()
    L, E = x.shape
    H, _, d = right.shape
    tokens = [t["token"].format(i) for i in range(L)]
    rows = [t["row"].format(i) for i in range(L)]
    fig, axes = plt.subplots(1, 1 + 2 * H, figsize=(9.0, 2.9), width_ratios=[E] + [d] * (2 * H))
    features = [t["feature"].format(k) for k in range(E)]
    _grid(axes[0], x, E, tokens, features, t["x"].format(L, E))
    for h in range(H):
        head = t["head"].format(h)
        _grid(axes[1 + h], right[h], E, tokens, features[h * d : (h + 1) * d], head)
        _grid(axes[1 + H + h], wrong[h], E, rows, [""] * d, head)
    fig.legend(
        handles=[Patch(color=TOKEN_COLORS[i], label=tokens[i]) for i in range(L)],
        loc="lower center",
        ncol=L,
        title=t["legend"],
        bbox_to_anchor=(0.5, -0.15),
        frameon=False,
    )
    fig.tight_layout()
    fig.subplots_adjust(top=0.8)
    for label, group in [("right", axes[1 : 1 + H]), ("wrong", axes[1 + H :])]:
        for ax in group:
            ax.apply_aspect()  # positions after aspect="equal" shrank the axes
        first, last = group[0].get_position(), group[-1].get_position()
        x = (first.x0 + last.x1) / 2
        fig.text(x, first.y1 + 0.14, t[label], ha="center", fontsize=10.5)
    return fig
