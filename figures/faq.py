"""FAQ figures, drawn from the values that snippets/faq/*.py compute."""

import matplotlib.pyplot as plt

from qkvsite.figures import figure, palette, words

# each label in the two languages, (Chinese, English), or one string for both; Unicode subscripts
# (dₖ) instead of mathtext, whose subscripts would be set smaller than the figures' smallest text
TEXT = {
    "var_title": ("q⋅k 的方差随 dₖ 增长", "The variance of q⋅k grows with dₖ"),
    "raw": "var(q⋅k)",
    "scaled": "var(q⋅k / √dₖ)",
    "guide": "y = dₖ",
    "peak_title": (
        "一行 softmax 中最大的权重（{} 个键，取平均）",
        "Largest weight in a softmax row ({} keys, averaged)",
    ),
    "unscaled": ("不缩放", "unscaled"),
    "with_scale": ("除以 √dₖ", "divided by √dₖ"),
    "over_dk": ("除以 dₖ", "divided by dₖ"),
    "uniform": ("均匀分布 1/{}", "uniform 1/{}"),
    "bleu": ("BLEU（开发集，越高越好）", "BLEU (dev set, higher is better)"),
    "ppl": ("困惑度 PPL（开发集，越低越好）", "perplexity PPL (dev set, lower is better)"),
    "heads": ("头数 H 与每头维度 dₖ（H⋅dₖ = 512）", "heads H and width per head dₖ (H⋅dₖ = 512)"),
    "source": ("数据：Vaswani et al. 2017 表 3", "Data: Vaswani et al. 2017, Table 3"),
    "flops_title": ("FLOP 计数（FlopCounterMode）", "FLOP count (FlopCounterMode)"),
    "time_title": ("实测时间（{}，{} 次取最短）", "Measured time ({}, best of {})"),
    "one_thread": ("CPU 单线程", "CPU, one thread"),
    "length": ("序列长度 L", "sequence length L"),
    "mflops": ("FLOP（百万）", "FLOPs (millions)"),
    "ms": ("时间（毫秒）", "time (ms)"),
    "measured": ("实测", "measured"),
    "fit": ("最后三点拟合斜率 {:.2f}", "fitted slope of the last three points {:.2f}"),
    "slope2": ("斜率 2 参考线", "slope 2 guide"),
    "mem_title": (
        "一次注意力调用的峰值内存（{} 个头，dₖ = {}）",
        "Peak memory of one attention call ({} heads, dₖ = {})",
    ),
    "naive": ("朴素实现：softmax(q kᵀ / √dₖ) v", "naive: softmax(q kᵀ / √dₖ) v"),
    "sdpa": "F.scaled_dot_product_attention",
    "one_matrix": ("一个 (头数, L, L) 分数矩阵", "one (heads, L, L) score matrix"),
    "cpu_method": (
        "测量：CPU，按时间顺序重放 torch.profiler 的内存记录",
        "measured on CPU: torch.profiler memory records, replayed",
    ),
    "cuda_method": (
        "测量：CUDA，torch.cuda.max_memory_allocated",
        "CUDA: torch.cuda.max_memory_allocated",
    ),
}


def _log_axes(ax, xs):
    """x on a log₂ scale with a tick at each of ``xs``; y on a log scale labelled with plain numbers
    (not 10²)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter("{x:g}")
    ax.yaxis.set_minor_formatter("")


def _plot(ax, xs, ys, style, color, label, fmt=None, dy=6):
    """One line; with ``fmt``, each point labelled with its value, ``dy`` points above it."""
    ax.plot(xs, ys, style, color=color, label=label)
    for x, y in zip(xs, ys, strict=True):
        if fmt:
            ax.annotate(
                fmt.format(y),
                (x, y),
                textcoords="offset points",
                xytext=(0, dy),
                ha="center",
                color=color,
            )


@figure("faq-scaling-variance", "faq/q08_scaling_variance.py")
def scaling_variance(ns, lang):
    t = words(TEXT, lang)
    d_ks, peak = ns["d_ks"], ns["peak"]
    fig, (ax_v, ax_p) = plt.subplots(2, 1, figsize=(5.8, 7.0), sharex=True)
    _log_axes(ax_v, d_ks)
    ax_v.set_yscale("log", base=2)
    ax_v.set_yticks([1, *d_ks], [str(y) for y in [1, *d_ks]])
    ax_v.plot(d_ks, d_ks, ":", color="grey", label=t["guide"])
    _plot(ax_v, d_ks, ns["raw_var"], "o-", "tab:red", t["raw"], "{:.0f}")
    _plot(ax_v, d_ks, ns["scaled_var"], "s-", "tab:blue", t["scaled"], "{:.2f}", dy=-16)
    ax_v.set_ylim(0.4, max(ns["raw_var"]) * 4)
    ax_v.set_title(t["var_title"])
    ax_v.legend(loc="upper left")
    _plot(ax_p, d_ks, peak["none"], "o-", "tab:red", t["unscaled"])
    _plot(ax_p, d_ks, peak["sqrt"], "s-", "tab:blue", t["with_scale"])
    _plot(ax_p, d_ks, peak["d_k"], "^-", "tab:green", t["over_dk"])
    ax_p.axhline(1 / ns["n_keys"], ls=":", color="grey", label=t["uniform"].format(ns["n_keys"]))
    ax_p.set_ylim(0, 1.05)
    ax_p.set_xlabel("dₖ")
    ax_p.set_title(t["peak_title"].format(ns["n_keys"]))
    ax_p.legend(loc="center right")
    fig.tight_layout()
    return fig


@figure("faq-heads-table3", "faq/q12_heads_table3.py")
def heads_table3(ns, lang):
    t = words(TEXT, lang)
    rows = ns["rows"]  # sorted by H
    colors = ["tab:orange" if name == "base" else "tab:blue" for name, *_ in rows]
    fig, axes = plt.subplots(2, 1, figsize=(5.8, 5.6), sharex=True)
    for ax, column, fmt, title in [
        (axes[0], 5, "{:.1f}", t["bleu"]),
        (axes[1], 4, "{:.2f}", t["ppl"]),
    ]:
        values = [r[column] for r in rows]
        ax.bar_label(ax.bar(range(len(rows)), values, color=colors), fmt=fmt)
        lo, hi = min(values), max(values)
        ax.set_ylim(lo - (hi - lo) * 1.2, hi + (hi - lo) * 0.4)
        ax.set_title(title)
        ax.spines[["top", "right"]].set_visible(False)
    axes[1].set_xticks(range(len(rows)), [f"H = {h}\ndₖ = {d_k}" for _, h, d_k, *_ in rows])
    axes[1].get_xticklabels()[[r[0] for r in rows].index("base")].set_color("tab:orange")
    axes[1].set_xlabel(t["heads"])
    fig.text(0.99, 0, t["source"], ha="right", va="top", color=palette()["muted"])
    fig.tight_layout()
    return fig


@figure("faq-attention-cost", "faq/q18_quadratic_cost.py", measured=True)
def attention_cost(ns, lang):
    t = words(TEXT, lang)
    slope, lengths, flops, timed, times = (
        ns[k] for k in ("fitted_slope", "lengths", "flops", "timed_lengths", "times")
    )
    fig, (ax_f, ax_t) = plt.subplots(2, 1, figsize=(5.8, 6.4), sharex=True)
    _plot(ax_f, lengths, [f / 1e6 for f in flops], "o-", "tab:purple", t["mflops"])
    _plot(ax_t, timed, [s * 1e3 for s in times], "o-", "tab:green", t["measured"])
    ax_t.plot(
        timed,
        [times[-1] * 1e3 * (L / timed[-1]) ** 2 for L in timed],
        ":",
        color="grey",
        label=t["slope2"],
    )
    for ax, xs, ys in [(ax_f, lengths, flops), (ax_t, timed, times)]:
        _log_axes(ax, lengths)
        fit = t["fit"].format(slope(xs[-3:], ys[-3:]))
        box = {"facecolor": palette()["paper"], "edgecolor": palette()["rule"]}
        ax.text(0.03, 0.95, fit, transform=ax.transAxes, va="top", bbox=box)
    ax_f.set_title(t["flops_title"])
    ax_f.set_ylabel(t["mflops"])
    ax_t.legend(loc="lower right")
    where = t["one_thread"] if ns["device"] == "cpu" else "CUDA"
    ax_t.set_title(t["time_title"].format(where, ns["repeats"]))
    ax_t.set_ylabel(t["ms"])
    ax_t.set_xlabel(t["length"])
    fig.tight_layout()
    return fig


@figure("faq-score-memory", "faq/q19_score_memory.py")
def score_memory(ns, lang):
    t = words(TEXT, lang)
    lengths, mib = ns["lengths"], 2**20
    fig, ax = plt.subplots(figsize=(5.8, 4.4))
    _plot(ax, lengths, [v / mib for v in ns["naive_peak"]], "o-", "tab:red", t["naive"], "{:.1f}")
    _plot(ax, lengths, [v / mib for v in ns["sdpa_peak"]], "s-", "tab:blue", t["sdpa"], "{:.1f}")
    _plot(ax, lengths, [v / mib for v in ns["one_score_matrix"]], ":", "grey", t["one_matrix"])
    _log_axes(ax, lengths)
    ax.set_ylim(top=max(ns["naive_peak"]) / mib * 4)
    ax.set_xlabel(t["length"])
    ax.set_ylabel("MiB")
    ax.set_title(t["mem_title"].format(ns["heads"], ns["d_k"]))
    method = t["cuda_method"] if ns["device"] == "cuda" else t["cpu_method"]
    # below the axes, clear of the lines
    ax.annotate(
        method,
        (1, 0),
        xycoords="axes fraction",
        xytext=(0, -38),
        textcoords="offset points",
        ha="right",
        va="top",
        color=palette()["muted"],
    )
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig
