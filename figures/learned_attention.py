"""Chapter 7 figures, drawn from the trained models of snippets/learned_attention/reversal.py."""

import math
from fractions import Fraction

import matplotlib.pyplot as plt
import torch

from qkvsite.figures import Says, figure, heatmap, palette, says, words

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
# what the captions call "almost all" of a row's weight, "close to zero" and "close to" a level
MOST = 0.9  # of a row's weight (1)
NEAR_ZERO = 0.05  # of a row's weight
NEAR_CHANCE = 0.02  # of the accuracy, an axis from 0 to 1
SETTLED = 0.01  # a loss below this share of the first step's is "close to zero"
SLOW = 0.25  # a loss that loses less than this share of its start over the run falls "slowly"


def _right_keys(weights):
    """(L, L) weights -> the weight on the right key j = L - 1 - i of each row i, and a mask of
    those cells."""
    length = weights.shape[-1]
    rows = torch.arange(length)
    right = torch.zeros(length, length, dtype=torch.bool)
    right[rows, length - 1 - rows] = True
    return weights[right.nonzero(as_tuple=True)], right


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


@says("learned-before-after")
def before_after_says(ns):
    after = ns["weights"][0].cpu()
    on_right, right = _right_keys(after)
    length = ns["L"]
    over = math.floor(on_right.min() * 10) * 10  # in %, the tens below the lowest
    return [
        Says(f"{length} × {length} heatmaps", f"{length} × {length} 热力图"),
        Says(  # chapter 7
            f"the anti-diagonal cells hold over {over}% of each row and the rest close to zero",
            f"反对角线上的格子占每一行 {over}% 以上的权重，其余接近零",
            holds=bool(on_right.min() * 100 > over and after[~right].max() < NEAR_ZERO),
        ),
        Says(  # chapter 4
            "almost all the weight of each row sits on the anti-diagonal",
            "每一行的权重几乎都落在反对角线上",
            holds=bool(on_right.min() > MOST),
        ),
    ]


@figure("learned-positions-alone", EXAMPLE)
def positions_alone(ns, lang):
    t = words(TEXT, lang)
    positions = [str(i) for i in range(ns["L"])]
    blind = (ns["blind_weights"][0].cpu(), _letters(ns), t["without_positions"].capitalize())
    return _pair(t, [blind, (ns["positions_only"].cpu(), positions, t["positions_title"])])


@says("learned-positions-alone")
def positions_alone_says(ns):
    blind = ns["blind_weights"][0].cpu()
    length = ns["L"]
    below = math.ceil(blind.max() * 10) * 10  # in %, the tens above the highest
    # each row's mean weight off the diagonal
    others = (blind.sum(dim=-1) - blind.diagonal()) / (length - 1)
    on_right, _ = _right_keys(ns["positions_only"].cpu())
    shown = round(float(on_right.min()) * 100)  # in %, as the cells write it
    return [
        Says(
            f"spread over the keys with no cell above {below}% and the diagonal lighter",
            f"权重分散在各个键上，没有一格超过 {below}%，对角线更浅",
            holds=bool(blind.max() * 100 < below and (blind.diagonal() < others).all()),
        ),
        Says(
            f"the {length} × {length} attention computed from the position table alone by the model"
            f" with positions, close to {shown}% on the anti-diagonal",
            f"有位置的模型只用位置表算出的 {length} × {length} 注意力，反对角线接近 {shown}%",
            holds=bool((on_right * 100 - shown).abs().max() < 1),
        ),
    ]


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


@says("learned-emergence")
def emergence_says(ns):
    by_step = {step: weights for step, _, weights in ns["log"]}
    snapshots = [by_step[step] for step in [*SNAPSHOTS, ns["log"][-1][0]]]
    on_right = [_right_keys(weights)[0] for weights in snapshots]
    means = torch.stack([weights.mean() for weights in on_right])
    # at first fewer than half the rows look at their right key most; then the right keys hold more
    # weight at each snapshot, and at the last one almost all of every row
    first, last = snapshots[0], on_right[-1]
    rows = torch.arange(len(first))
    at_first = int((first.argmax(dim=-1) == len(first) - 1 - rows).sum())
    darken = bool((means.diff() > 0).all()) and bool(last.min() > MOST)
    steps_en, steps_zh = (sep.join(map(str, SNAPSHOTS)) for sep in (", ", "、"))
    return [
        Says(
            f"at training steps {steps_en} and the last step",
            f"在训练第 {steps_zh} 步和最后一步的样子",
        ),
        Says(
            "scattered at first, then the anti-diagonal cells darken until almost nothing else is"
            " left",
            "一开始杂乱，随后反对角线上的格子逐渐变深，最后几乎只剩反对角线",
            holds=at_first < len(first) / 2 and darken,
        ),
    ]


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


@says("learned-training-curves")
def training_curves_says(ns):
    losses, blind_losses = ns["losses"], ns["blind_losses"]
    accuracies, blind = ([a for _, a, _ in log] for log in (ns["log"], ns["blind_log"]))
    every = ns["log"][1][0] - ns["log"][0][0]  # steps between two tests
    others, vocab = ns["L"] - 1, ns["vocab_size"]  # as the drawing's dashed and dotted lines
    chance, uniform = Fraction(1, others), Fraction(1, vocab)
    third = len(losses) // 3
    # with positions: from step `third` on, every loss below SETTLED of the first
    settled = max(losses[third - 1 :]) < SETTLED * losses[0]
    # without positions: the means of ten stretches of the run fall one after the other, by less
    # than SLOW of the first over the run, and no loss is below ln(L - 1)
    stretch = len(blind_losses) // 10
    means = torch.tensor(blind_losses).unfold(0, stretch, stretch).mean(dim=-1)
    falls = bool((means.diff() < 0).all() and means[0] - means[-1] < SLOW * means[0])
    above = min(blind_losses) > math.log(others)
    # with positions: the accuracy never drops and ends at its highest
    rises = all(b >= a for a, b in zip(accuracies, accuracies[1:], strict=False))
    # without positions: it rises to 1/(L - 1); from the first point at or above it, it stays within
    # NEAR_CHANCE of it, and lands on both sides of it
    reached = next(i for i, a in enumerate(blind) if a >= chance)
    after = blind[reached:]
    hugs = blind[0] < chance - NEAR_CHANCE and all(abs(a - chance) < NEAR_CHANCE for a in after)
    both_sides = hugs and min(after) < chance < max(after)
    final = accuracies[-1]
    return [
        Says(  # the alt texts
            f"the one with positions falling close to zero within the first {third} steps",
            f"有位置的一条在前 {third} 步内降到接近零",
            holds=settled,
        ),
        Says(
            "the one without positions falling slowly and staying above the dashed line at"
            f" ln {others}",
            f"没有位置的一条缓慢下降、始终高于 ln {others} 的虚线",
            holds=falls and above,
        ),
        Says(
            f"the test accuracy, rising to {final:g} with positions",
            f"测试准确率，有位置的一条升到 {final:g}",
            holds=rises and accuracies[0] < final,
        ),
        Says(
            f"without positions it rises to the dashed line at {chance} and stays close to it, a"
            " little above or below",
            f"没有位置的一条升到 {chance} 的虚线后一直贴着它，时而略高时而略低",
            holds=both_sides,
        ),
        Says(  # the captions
            f"evaluated every {every} steps",
            f"每 {every} 步评估一次",
        ),
        Says(
            "what a model that cannot see positions can expect at best: a loss of"
            f" $\\ln\\,{others}$ and an accuracy of ${chance}$, chance",
            "看不到位置的模型平均来说最好能做到的："
            f"损失 $\\ln\\,{others}$，准确率 ${chance}$（随机水平）",
            holds=above and hugs,  # the measured curves do not beat them beyond the noise
        ),
        Says(
            f"On the {len(ns['x_test'])} test sequences its measured accuracy lands a little above"
            f" or below ${chance}$",
            f"在 {len(ns['x_test'])} 条测试序列上，实测的准确率会略高或略低于 ${chance}$",
            holds=both_sides,
        ),
        Says(
            f"${uniform}$, is a uniform choice among all {vocab} tokens",
            f"点线 ${uniform}$ 是在全部 {vocab} 个词元中均匀地选",
        ),
    ]
