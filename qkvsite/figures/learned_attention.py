"""Chapter 9 figures, drawn from the trained models of snippets/learned_attention/reversal.py."""

import math

import matplotlib.pyplot as plt

from qkvsite.figures import figure, heatmap, palette, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "before": ("训练前（随机权重）", "Before training (random weights)"),
    "after": ("训练 {} 步之后", "After {} training steps"),
    "query": ("查询：位置 i 上的词元", "query: the token at position i"),
    "key": ("键：位置 j 上的词元", "key: the token at position j"),
    "query_short": ("查询 i", "query i"),
    "key_short": ("键 j", "key j"),
    "right_key": ("方框：正确的键 $j = L - 1 - i$", "boxes: the right key $j = L - 1 - i$"),
    "loss_title": ("训练损失（每步一个批次）", "Training loss (one batch per step)"),
    "accuracy_title": ("测试准确率（{:,} 个没训练过的序列）", "Test accuracy ({:,} sequences never trained on)"),
    "step": ("训练步数", "training step"),
    "loss": ("交叉熵损失", "cross-entropy loss"),
    "accuracy": ("准确率", "accuracy"),
    "with_positions": ("有位置（可学习的位置表）", "with positions (learned table)"),
    "without_positions": ("没有位置", "without positions"),
    "ln7": ("不看位置的下限 $\\ln 7$", "floor without positions, $\\ln 7$"),
    "one_in_seven": ("不看位置的上限 $1/7$", "ceiling without positions, $1/7$"),
    "one_in_sixteen": ("瞎猜 $1/16$", "guessing, $1/16$"),
    "snapshot": ("第 {} 步\n准确率 {:.0%}", "step {}\naccuracy {:.0%}"),
    "emergence_title": ("同一个测试序列的注意力，训练过程中", "Attention on one test sequence during training"),
    "blind_title": ("没有位置：训练 {} 步之后", "Without positions: after {} steps"),
    "positions_title": ("只用位置表，不看词元", "The position table alone, no tokens"),
    "positions_formula": "$\\mathrm{softmax}(P W^Q (P W^K)^\\top / \\sqrt{d_k})$",
    "position": ("位置 {}", "position {}"),
    "query_position": ("查询位置 i", "query position i"),
    "key_position": ("键位置 j", "key position j"),
}

EXAMPLE = "learned_attention/reversal.py"
WITH, WITHOUT = "tab:blue", "tab:red"  # the two models, in every figure
SNAPSHOTS = (0, 20, 30, 40, 50)  # training steps drawn in learned-emergence, then the last one
MARK = "tab:orange"  # the right key


def _labels(ns):
    """'0 F', '1 P', ...: position and letter of each token of the first test sequence."""
    text = ns["text"](ns["x_test"][0])
    return [f"{i} {letter}" for i, letter in enumerate(text)]


def _mark_right_keys(ax, length):
    """A box around cell (i, L-1-i) of every row."""
    for i in range(length):
        ax.add_patch(plt.Rectangle((length - 1 - i - 0.5, i - 0.5), 1, 1, fill=False, ec=MARK, lw=2.2))


def _attention(ax, weights, labels, title, fmt="{:.2f}"):
    heatmap(ax, weights, labels, labels, fmt=fmt, vmin=0, vmax=1)
    for text in ax.texts:
        text.set_fontsize(8)
    ax.set_title(title, fontsize=11)
    ax.tick_params(labelsize=9)


@figure("learned-before-after", EXAMPLE)
def before_after(ns, lang):
    t = words(TEXT, lang)
    labels, length = _labels(ns), ns["L"]
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 5.0))
    panels = [(ns["untrained"], t["before"]), (ns["weights"][0].cpu(), t["after"].format(len(ns["losses"])))]
    for ax, (weights, title) in zip(axes, panels, strict=True):
        _attention(ax, weights, labels, title)
        _mark_right_keys(ax, length)
        ax.set_xlabel(t["key"], fontsize=10)
    axes[0].set_ylabel(t["query"], fontsize=10)
    fig.text(0.5, 0.01, t["right_key"], ha="center", va="bottom", fontsize=10, color=palette()["muted"])
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


@figure("learned-emergence", EXAMPLE)
def emergence(ns, lang):
    t = words(TEXT, lang)
    log, length = ns["log"], ns["L"]
    by_step = {step: (accuracy, weights) for step, accuracy, weights in log}
    steps = [*SNAPSHOTS, log[-1][0]]
    fig, axes = plt.subplots(2, 3, figsize=(7.6, 5.6), layout="constrained")
    for ax, step in zip(axes.flat, steps, strict=True):
        accuracy, weights = by_step[step]
        image = ax.imshow(weights.numpy(), cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
        _mark_right_keys(ax, length)
        ax.set_title(t["snapshot"].format(step, accuracy), fontsize=11)
        ax.set_xticks([])
        ax.set_yticks([])
    for ax in axes[-1]:  # the axes' names once, on the outer panels
        ax.set_xlabel(t["key_short"], fontsize=10)
    for ax in axes[:, 0]:
        ax.set_ylabel(t["query_short"], fontsize=10)
    fig.colorbar(image, ax=axes, fraction=0.03, pad=0.02)
    fig.suptitle(t["emergence_title"], fontsize=12)
    return fig


@figure("learned-training-curves", EXAMPLE)
def training_curves(ns, lang):
    t = words(TEXT, lang)
    fig, (ax_l, ax_a) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    runs = [
        (ns["losses"], ns["log"], WITH, t["with_positions"]),
        (ns["blind_losses"], ns["blind_log"], WITHOUT, t["without_positions"]),
    ]
    for losses, log, color, label in runs:
        ax_l.plot(range(1, len(losses) + 1), losses, color=color, lw=1.2, label=label)
        ax_a.plot([s for s, _, _ in log], [a for _, a, _ in log], "o-", ms=3, color=color, label=label)
    ax_l.axhline(math.log(7), color=palette()["ink"], ls="--", lw=1, label=t["ln7"])
    ax_l.set_ylim(bottom=0)
    ax_l.set_xlabel(t["step"])
    ax_l.set_ylabel(t["loss"])
    ax_l.set_title(t["loss_title"], fontsize=10)
    ax_l.legend(fontsize=9, loc="center right")
    ax_a.axhline(1 / 7, color=palette()["ink"], ls="--", lw=1, label=t["one_in_seven"])
    ax_a.axhline(1 / 16, color=palette()["muted"], ls=":", lw=1, label=t["one_in_sixteen"])
    ax_a.set_ylim(0, 1.05)
    ax_a.set_xlabel(t["step"])
    ax_a.set_ylabel(t["accuracy"])
    ax_a.set_title(t["accuracy_title"].format(len(ns["x_test"])), fontsize=10)
    ax_a.legend(fontsize=9, loc="center right")
    for ax in (ax_l, ax_a):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


@figure("learned-positions-alone", EXAMPLE)
def positions_alone(ns, lang):
    t = words(TEXT, lang)
    labels, length = _labels(ns), ns["L"]
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(10.0, 5.0))
    _attention(ax_b, ns["blind_weights"][0].cpu(), labels, t["blind_title"].format(len(ns["blind_losses"])))
    _mark_right_keys(ax_b, length)
    ax_b.set_xlabel(t["key"], fontsize=10)
    ax_b.set_ylabel(t["query"], fontsize=10)
    positions = [str(i) for i in range(length)]
    _attention(ax_p, ns["positions_only"].cpu(), positions, t["positions_title"] + "\n" + t["positions_formula"])
    _mark_right_keys(ax_p, length)
    ax_p.set_xlabel(t["key_position"], fontsize=10)
    ax_p.set_ylabel(t["query_position"], fontsize=10)
    fig.text(0.5, 0.01, t["right_key"], ha="center", va="bottom", fontsize=10, color=palette()["muted"])
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig
