"""The home page's picture of the idea, drawn from snippets/qkv/verb_subject.py: one token looks at
every token, and takes most from the one it matches."""

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from qkvsite.figures import Says, figure, palette, says, words

ROLES = "qkv/verb_subject.py"

TEXT = {
    "words": {"dog": ("狗", "dog"), "bites": ("咬", "bites"), "man": ("人", "man")},
    "title": (
        "“{}”看遍所有词元，从它的主语“{}”那里取得最多",
        '"{}" looks at every token and takes most from its subject, "{}"',
    ),
    "weight": ("权重 {:.3f}", "weight {:.3f}"),
}
ARROW = "#d9730d"
QUERY = 1  # "bites", the row the snippet traces


@figure("attention-idea", ROLES)
def attention_idea(ns, lang):
    t = words(TEXT, lang)
    tokens = [t["words"][token] for token in ns["tokens"]]
    weights = ns["weights"].detach().cpu().tolist()
    query = QUERY
    fig, ax = plt.subplots(figsize=(5.6, 2.3))
    ax.set_xlim(0, 5.6)
    ax.set_ylim(0, 2.3)
    ax.axis("off")
    xs = [0.9 + 1.9 * i for i in range(len(tokens))]
    y, w, h = 0.35, 1.1, 0.42
    for i, (x, token) in enumerate(zip(xs, tokens, strict=True)):
        fill = "#f6c28b" if i == query else palette()["paper"]
        ax.add_patch(
            FancyBboxPatch(
                (x - w / 2, y),
                w,
                h,
                boxstyle="round,pad=0,rounding_size=0.06",
                fc=fill,
                ec=palette()["ink"],
                lw=1.2,
            )
        )
        colour = "#222222" if i == query else palette()["ink"]
        ax.text(x, y + h / 2, token, ha="center", va="center", fontsize=13, color=colour)
    for j, (x, weight) in enumerate(zip(xs, weights, strict=True)):
        if j == query:  # itself: a loop above its own box
            start, end, rad = (x - 0.25, y + h), (x + 0.25, y + h), -1.6
        else:
            start, end = (xs[query] + (0.2 if j > query else -0.2), y + h), (x, y + h)
            rad = -0.45 if j > query else 0.45
        ax.add_patch(
            FancyArrowPatch(
                start,
                end,
                connectionstyle=f"arc3,rad={rad}",
                arrowstyle="-|>",
                mutation_scale=8 + 14 * weight,
                lw=0.8 + 9 * weight,
                color=ARROW,
                shrinkA=2,
                shrinkB=2,
            )
        )
        label_y = y + h + (0.55 if j == query else 0.95)
        label_x = x if j == query else (x + xs[query]) / 2
        ax.text(
            label_x,
            label_y,
            t["weight"].format(weight),
            ha="center",
            va="bottom",
            fontsize=10,
            color=palette()["ink"],
        )
    subject = max(range(len(weights)), key=weights.__getitem__)
    ax.set_title(t["title"].format(tokens[query], tokens[subject]), fontsize=10.5)
    return fig


@says("attention-idea")
def attention_idea_says(ns):
    """The arrows' widths grow with the weights: the thickest goes to the largest weight."""
    weights = ns["weights"].detach().cpu().tolist()
    top = max(range(len(weights)), key=weights.__getitem__)
    zh, en = (words(TEXT, lang)["words"] for lang in ("zh", "en"))
    query, most = ns["tokens"][QUERY], ns["tokens"][top]
    return [
        Says(
            f"arrows from {en[query]} to each token, the thickest to {en[most]}",
            f"从“{zh[query]}”出发的箭头指向每个词元，指向“{zh[most]}”的最粗",
        ),
    ]
