"""Chapter 8 figures, drawn from snippets/fast_attention/*.py."""

import matplotlib.pyplot as plt

from qkvsite.figures import figure, note_measured_on, palette, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "mem_title": (
        "一次注意力的峰值内存（1 条序列，$H$ = {}，$d_k$ = {}，float32）",
        "Peak memory of one attention call (1 sequence, $H$ = {}, $d_k$ = {}, float32)",
    ),
    "naive": ("朴素公式：存下整个 $L \\times L$ 分数矩阵", "naive formula: stores the whole $L \\times L$ scores"),
    "blocked": ("分块注意力（{}×{} 的块）", "blocked attention ({}×{} tiles)"),
    "sdpa": ("F.scaled_dot_product_attention（默认内核）", "F.scaled_dot_product_attention (default kernel)"),
    "one_matrix": ("一个分数矩阵的大小（公式）", "one score matrix (formula)"),
    "length": ("序列长度 $L$", "sequence length $L$"),
    "cpu_method": ("CPU（按分析器记录的分配与释放回放）", "CPU (allocations and frees replayed from the profiler)"),
    "cuda_method": ("CUDA（torch.cuda.max_memory_allocated）", "CUDA (torch.cuda.max_memory_allocated)"),
    "tiles_title": (
        "因果分块注意力：{}×{} 的分数，{}×{} 的块",
        "Causal blocked attention: {}×{} scores in {}×{} tiles",
    ),
    "skipped": ("整块跳过（全在对角线上方）", "skipped (all above the diagonal)"),
    "partial": ("块内要遮挡（跨过对角线）", "masked inside (crosses the diagonal)"),
    "full": ("整块计算，不用遮挡", "computed whole, no mask"),
    "key": ("键的位置 $j$", "key position $j$"),
    "query": ("查询的位置 $i$", "query position $i$"),
}

COLOURS = {"skipped": None, "partial": "#f2b84b", "full": "#4c9f70"}


@figure("fast-attention-memory", "fast_attention/memory.py", measured=True)
def memory(ns, lang):
    t = words(TEXT, lang)
    lengths, peak, block = ns["lengths"], ns["peak"], ns["block"]
    mib = 2**20
    fig, ax = plt.subplots(figsize=(8.4, 4.6))
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
        ax.annotate(
            f"{values[-1] / mib:.1f} MiB",
            (lengths[-1], values[-1] / mib),
            textcoords="offset points",
            xytext=(7, 0),
            ha="left",
            va="center",
            fontsize=9,
            color=colour,
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(lengths, [str(L) for L in lengths])
    ax.set_xlim(lengths[0] / 1.25, lengths[-1] * 1.7)  # room for the values at the right
    ax.set_ylim(top=max(peak["naive"]) / mib * 4)
    ax.set_xlabel(t["length"])
    ax.set_ylabel("MiB")
    ax.set_title(t["mem_title"].format(ns["H"], ns["d_k"]), fontsize=10)
    ax.legend(loc="upper left", fontsize=8.5)
    ax.grid(True, which="major", alpha=0.3)
    note_measured_on(fig, ns, lang, t["cuda_method"] if ns["device"] == "cuda" else t["cpu_method"], fontsize=8.5)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


@figure("fast-attention-tiles", "fast_attention/blocked_attention.py")
def tiles(ns, lang):
    t = words(TEXT, lang)
    L, block = ns["L"], 16
    n = L // block
    fig, ax = plt.subplots(figsize=(8.0, 4.6))
    for a in range(n):  # query tile
        for b in range(n):  # key tile
            first_i, last_i, first_j, last_j = a * block, (a + 1) * block - 1, b * block, (b + 1) * block - 1
            kind = "skipped" if first_j > last_i else "full" if last_j <= first_i else "partial"
            colour = COLOURS[kind] or palette()["paper"]
            ax.add_patch(
                plt.Rectangle(
                    (first_j - 0.5, first_i - 0.5),
                    block,
                    block,
                    facecolor=colour,
                    edgecolor=palette()["rule"] if kind == "skipped" else palette()["paper"],
                    hatch="///" if kind == "skipped" else None,
                    lw=2,
                )
            )
    ax.plot([-0.5, L - 0.5], [-0.5, L - 0.5], color=palette()["ink"], lw=1.2, ls="--")
    ax.set_xlim(-0.5, L - 0.5)
    ax.set_ylim(L - 0.5, -0.5)
    ax.set_aspect("equal")
    ticks = list(range(0, L + 1, block))
    ax.set_xticks([x - 0.5 for x in ticks], [str(x) for x in ticks])
    ax.set_yticks([y - 0.5 for y in ticks], [str(y) for y in ticks])
    ax.set_xlabel(t["key"])
    ax.set_ylabel(t["query"])
    ax.set_title(t["tiles_title"].format(L, L, block, block), fontsize=10)
    handles = [
        plt.Rectangle(
            (0, 0),
            1,
            1,
            facecolor=COLOURS[kind] or palette()["paper"],
            edgecolor=palette()["rule"],
            hatch="///" if kind == "skipped" else None,
        )
        for kind in COLOURS
    ]
    ax.legend(
        handles, [t[kind] for kind in COLOURS], loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8.5, frameon=False
    )
    fig.tight_layout()
    return fig
