"""Chapter 9 figures, drawn from snippets/fast_attention/*.py."""

import matplotlib.pyplot as plt

from qkvsite.figures import figure, note_measured_on, palette, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "mem_title": (
        "一次注意力的峰值内存（$H$ = {}，$d_k$ = {}）",
        "Peak memory of one call ($H$ = {}, $d_k$ = {})",
    ),
    "naive": ("朴素公式", "naive formula"),
    "blocked": ("分块注意力（{}×{} 的块）", "blocked ({}×{} tiles)"),
    "sdpa": "F.scaled_dot_product_attention",
    "one_matrix": ("一个分数矩阵（公式）", "one score matrix (formula)"),
    "length": ("序列长度 $L$", "sequence length $L$"),
    "cpu_method": ("CPU，回放分析器记录", "CPU, profiler replayed"),
    "cuda_method": "torch.cuda.max_memory_allocated",
    "tiles_title": ("{}×{} 的分数，{}×{} 的块", "{}×{} scores in {}×{} tiles"),
    "skipped": ("整块跳过", "skipped"),
    "partial": ("块内遮挡", "masked inside"),
    "full": ("整块计算", "no mask"),
    "key": ("键的位置 $j$", "key position $j$"),
    "query": ("查询的位置 $i$", "query position $i$"),
}

COLOURS = {"skipped": None, "partial": "#f2b84b", "full": "#4c9f70"}


@figure("fast-attention-memory", "fast_attention/memory.py", measured=True)
def memory(ns, lang):
    t = words(TEXT, lang)
    lengths, peak, block = ns["lengths"], ns["peak"], ns["block"]
    mib = 2**20
    fig, ax = plt.subplots(figsize=(5.8, 4.4), layout="constrained")
    series = [
        (peak["naive"], "o-", "tab:red", t["naive"]),
        (peak["blocked"], "s-", "tab:blue", t["blocked"].format(block, block)),
        (peak["sdpa"], "^-", "tab:green", t["sdpa"]),
        ([ns["H"] * L * L * 4 for L in lengths], ":", "grey", t["one_matrix"]),
    ]
    for values, style, colour, label in series:
        ax.plot(lengths, [v / mib for v in values], style, color=colour, label=label)
    for values, colour in [(peak["naive"], "tab:red"), (peak["blocked"], "tab:blue")]:
        # the value at the longest length, right of its point: where the lines are furthest apart
        end = (lengths[-1], values[-1] / mib)
        ax.annotate(
            f"{end[1]:.1f} MiB",
            end,
            xytext=(7, 0),
            textcoords="offset points",
            va="center",
            color=colour,
        )
    ax.set_xscale("log", base=2)
    ax.set(yscale="log", xticks=lengths, xticklabels=lengths, xlabel=t["length"], ylabel="MiB")
    ax.set_title(t["mem_title"].format(ns["H"], ns["d_k"]))
    ax.yaxis.set_major_formatter("{x:g}")  # 1, 10, 100: no small superscripts
    ax.set_xlim(lengths[0] / 1.25, lengths[-1] * 1.9)  # room for the values at the right
    ax.set_ylim(top=max(peak["naive"]) / mib * 6)
    ax.legend(loc="upper left")
    ax.grid(True, alpha=0.3)
    note_measured_on(fig, ns, lang, t["cuda_method"] if ns["device"] == "cuda" else t["cpu_method"])
    fig.get_layout_engine().set(rect=(0, 0.05, 1, 1))
    return fig


@figure("fast-attention-tiles", "fast_attention/blocked_attention.py")
def tiles(ns, lang):
    t = words(TEXT, lang)
    L, block = ns["L"], 16

    def tile(xy, kind, **label):
        skipped = kind == "skipped"
        edge = palette()["rule"] if skipped else palette()["paper"]
        colour = COLOURS[kind] or palette()["paper"]
        return plt.Rectangle(
            xy, block, block, fc=colour, ec=edge, hatch="///" if skipped else None, lw=2, **label
        )

    fig, ax = plt.subplots(figsize=(5.8, 4.3), layout="constrained")
    ticks = range(0, L + 1, block)  # the tiles' edges
    for i in ticks[:-1]:  # first query of a tile
        for j in ticks[:-1]:  # first key of a tile: above the diagonal, on it, or below
            ax.add_patch(tile((j, i), "skipped" if j > i else "partial" if j == i else "full"))
    ax.plot([0, L], [0, L], color=palette()["ink"], lw=1.2, ls="--")
    ax.set(
        xlim=(0, L),
        ylim=(L, 0),
        aspect="equal",
        xticks=ticks,
        yticks=ticks,
        xlabel=t["key"],
        ylabel=t["query"],
    )
    ax.set_title(t["tiles_title"].format(L, L, block, block))
    ax.legend(
        handles=[tile((0, 0), kind, label=t[kind]) for kind in COLOURS],
        loc="upper left",
        bbox_to_anchor=(1, 1),
    )
    return fig
