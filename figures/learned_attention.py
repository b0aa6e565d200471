"""Chapter 7 figures, drawn from the trained models of snippets/learned_attention/reversal.py."""

import math

import matplotlib.pyplot as plt

from qkvsite.figures import figure, heatmap, palette, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "before": ("训练前", "Before training"),
    "after": ("训练 {} 步之后", "After {} steps"),
    "query": ("查询 i", "query i"),
    "key": ("键 j", "key j"),
    "note": (
        "格子里是权重（%），方框是正确的键 j = L − 1 − i",
        "weights in %; boxes: the right key j = L − 1 − i",
    ),
    "loss_title": ("训练损失（每步一个批次）", "Training loss (one batch per step)"),
    "accuracy_title": (
        "测试准确率（{:,} 个没训练过的序列）",
        "Test accuracy ({:,} sequences never trained on)",
    ),
    "step": ("训练步数", "training step"),
    "with_positions": ("有位置（可学习的位置表）", "with positions (learned table)"),
    "without_positions": ("没有位置", "without positions"),
    "ln7": ("看不到位置的期望损失下限 ln {}", "best expected loss without positions, ln {}"),
    "one_in_seven": (
        "看不到位置的随机水平（期望值）1/{}",
        "chance without positions (expected), 1/{}",
    ),
    "one_in_sixteen": ("均匀分布 1/{}", "uniform, 1/{}"),
    "snapshot": ("第 {} 步\n准确率 {:.0%}", "step {}\naccuracy {:.0%}"),
    "positions_title": ("只用位置表", "Position table alone"),
}

EXAMPLE = "learned_attention/reversal.py"
WITH, WITHOUT = "tab:blue", "tab:red"  # the two models, in every figure
SNAPSHOTS = (0, 20, 30, 40, 50)  # training steps drawn in learned-emergence, then the last one


def _mark_right_keys(ax, length):
    """A box around cell (i, L-1-i) of every row."""
    for i in range(length):
        ax.add_patch(
            plt.Rectangle((length - 1 - i - 0.5, i - 0.5), 1, 1, fill=False, ec="tab:orange", lw=2)
        )


def _pair(t, panels):
    """Two attention maps side by side, each cell's weight written in %, the right keys boxed.

    ``panels``: (weights, tick labels, title) of each map.
    """
    fig, axes = plt.subplots(1, 2, figsize=(5.9, 3.6))
    for ax, (weights, labels, title) in zip(axes, panels, strict=True):
        heatmap(ax, weights * 100, labels, labels, fmt="{:.0f}", vmin=0, vmax=100)
        _mark_right_keys(ax, len(labels))
        ax.set_title(title)
        ax.set_xlabel(t["key"])
        ax.tick_params(labelsize=10)
    axes[0].set_ylabel(t["query"])
    fig.text(0.5, 0, t["note"], ha="center", va="bottom", color=palette()["muted"])
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def _letters(ns):
    """'0 F', '1 P', ...: position and letter of each token of the first test sequence."""
    return [f"{i} {letter}" for i, letter in enumerate(ns["text"](ns["x_test"][0]))]


@figure("learned-before-after", EXAMPLE)
def before_after(ns, lang):
    t = words(TEXT, lang)
    after = t["after"].format(len(ns["losses"]))
    return _pair(
        t,
        [
            (ns["untrained"], _letters(ns), t["before"]),
            (ns["weights"][0].cpu(), _letters(ns), after),
        ],
    )


@figure("learned-positions-alone", EXAMPLE)
def positions_alone(ns, lang):
    t = words(TEXT, lang)
    positions = [str(i) for i in range(ns["L"])]
    blind = (ns["blind_weights"][0].cpu(), _letters(ns), t["without_positions"].capitalize())
    return _pair(t, [blind, (ns["positions_only"].cpu(), positions, t["positions_title"])])


@figure("learned-emergence", EXAMPLE)
def emergence(ns, lang):
    t = words(TEXT, lang)
    by_step = {step: (accuracy, weights) for step, accuracy, weights in ns["log"]}
    fig, axes = plt.subplots(2, 3, figsize=(5.8, 4.6), layout="constrained")
    for ax, step in zip(axes.flat, [*SNAPSHOTS, ns["log"][-1][0]], strict=True):
        accuracy, weights = by_step[step]
        image = ax.imshow(weights.numpy(), cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
        _mark_right_keys(ax, ns["L"])
        ax.set_title(t["snapshot"].format(step, accuracy))
        ax.set_xticks([])
        ax.set_yticks([])
    for ax in axes[-1]:  # the axes' names once, on the outer panels
        ax.set_xlabel(t["key"])
    for ax in axes[:, 0]:
        ax.set_ylabel(t["query"])
    fig.colorbar(image, ax=axes, fraction=0.04, pad=0.03)
    return fig


@figure("learned-training-curves", EXAMPLE)
def training_curves(ns, lang):
    t = words(TEXT, lang)
    fig, (ax_l, ax_a) = plt.subplots(2, 1, figsize=(5.9, 6.4), sharex=True)
    runs = [
        (ns["losses"], ns["log"], WITH, t["with_positions"]),
        (ns["blind_losses"], ns["blind_log"], WITHOUT, t["without_positions"]),
    ]
    for losses, log, color, label in runs:
        ax_l.plot(range(1, len(losses) + 1), losses, color=color, lw=1.2, label=label)
        ax_a.plot(
            [s for s, _, _ in log], [a for _, a, _ in log], "o-", ms=3, color=color, label=label
        )
    # without positions: any of the other tokens; any token at all
    others, vocab = (ns["L"] - 1, ns["vocab_size"])
    ax_l.axhline(
        math.log(others), color=palette()["ink"], ls="--", lw=1, label=t["ln7"].format(others)
    )
    ax_a.axhline(
        1 / others, color=palette()["ink"], ls="--", lw=1, label=t["one_in_seven"].format(others)
    )
    ax_a.axhline(
        1 / vocab, color=palette()["muted"], ls=":", lw=1, label=t["one_in_sixteen"].format(vocab)
    )
    ax_l.set_ylim(bottom=0)
    ax_a.set_ylim(0, 1.05)
    ax_l.set_title(t["loss_title"])
    ax_a.set_title(t["accuracy_title"].format(len(ns["x_test"])))
    ax_a.set_xlabel(t["step"])
    for ax, where in [(ax_l, "lower right"), (ax_a, "center right")]:
        ax.grid(True, alpha=0.3)
        ax.legend(loc=where)
    fig.tight_layout()
    return fig
