"""FAQ figures, drawn from the values that snippets/faq/*.py compute."""

import math

import matplotlib.pyplot as plt

from qkvsite.figures import Says, figure, palette, says, words

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
    "slope2": ("斜率 {} 参考线", "slope {} guide"),
    "mem_title": (
        "一次注意力调用的峰值内存（{} 个头，dₖ = {}）",
        "Peak memory of one attention call ({} heads, dₖ = {})",
    ),
    "naive": ("朴素实现：softmax(q kᵀ / √dₖ) v", "naive: softmax(q kᵀ / √dₖ) v"),
    "sdpa": "F.scaled_dot_product_attention",
    "one_matrix": ("一个 (头数, L, L) 分数矩阵", "one (heads, L, L) score matrix"),
    "cpu_method": (
        "测量：CPU 单线程，按时间顺序重放 torch.profiler 的内存记录",
        "measured on CPU, one thread: torch.profiler memory records, replayed",
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


def end_slope(xs, ys):
    """The log-log slope from the first point to the last: the exponent p of y ∝ x^p."""
    return math.log(ys[-1] / ys[0]) / math.log(xs[-1] / xs[0])


def monotone(ys, rising=True):
    """Every step goes the one way."""
    return all((b > a) if rising else (b < a) for a, b in zip(ys[:-1], ys[1:], strict=True))


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


@says("faq-scaling-variance")
def scaling_variance_says(ns):
    d_ks, raw, scaled, peak = ns["d_ks"], ns["raw_var"], ns["scaled_var"], ns["peak"]
    uniform = 1 / ns["n_keys"]
    return [
        Says(
            "the variance of q·k grows linearly with d_k",
            "q·k 的方差随 d_k 线性增长",
            holds=abs(end_slope(d_ks, raw) - 1) < 0.1
            and all(0.8 < v / d < 1.25 for v, d in zip(raw, d_ks, strict=True)),
        ),
        Says(
            "divided by √d_k it stays about constant",
            "除以 √d_k 后基本不变",
            holds=max(scaled) / min(scaled) < 1.25,
        ),
        Says(
            "the largest softmax weight in a row tends towards one-hot as d_k grows",
            "一行中最大的 softmax 权重随 d_k 增大趋向 one-hot",
            holds=monotone(peak["none"]) and peak["none"][-1] > 0.9,
        ),
        Says(
            "divided by √d_k it stays the same",
            "除以 √d_k 时保持不变",
            holds=max(peak["sqrt"]) - min(peak["sqrt"]) < 0.05,
        ),
        Says(
            "divided by d_k it tends towards a uniform distribution",
            "除以 d_k 时趋向均匀分布",
            holds=monotone(peak["d_k"], rising=False)
            and peak["d_k"][-1] - uniform < (peak["d_k"][0] - uniform) / 4,
        ),
    ]


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


GUIDE_SLOPE = 2  # the timing panel's guide: quadratic growth through the longest timed point


def _guide(timed, times):
    """Seconds on the guide of slope GUIDE_SLOPE through the last measured point."""
    return [times[-1] * (L / timed[-1]) ** GUIDE_SLOPE for L in timed]


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
        [s * 1e3 for s in _guide(timed, times)],
        ":",
        color="grey",
        label=t["slope2"].format(GUIDE_SLOPE),
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


@says("faq-attention-cost")
def attention_cost_says(ns):
    """The FLOP count is exact; the measured times carry no claim but the guide's slope."""
    lengths, flops, timed = ns["lengths"], ns["flops"], ns["timed_lengths"]
    # the slope between each two neighbouring lengths
    steps = [end_slope(lengths[i : i + 2], flops[i : i + 2]) for i in range(len(lengths) - 1)]
    guide = _guide(timed, ns["times"])
    return [
        Says(
            "its slope approaching that of quadratic growth",
            "斜率逐渐逼近平方增长的斜率",
            holds=monotone(steps) and abs(steps[-1] - 2) < 0.1,
        ),
        Says(
            "a reference line for quadratic growth",
            "平方增长的参考线",
            holds=abs(end_slope(timed, guide) - 2) < 1e-9,
        ),
    ]


@figure("faq-score-memory", "faq/q19_score_memory.py", measured=True)
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


@says("faq-score-memory")
def score_memory_says(ns):
    """Peak memory is re-measured at each run: every length above or below, and the slopes from
    the first length to the last, with wide margins."""
    lengths, naive, sdpa = ns["lengths"], ns["naive_peak"], ns["sdpa_peak"]
    matrix = ns["one_score_matrix"]
    return [
        Says(f"all {ns['heads']} heads", f"{ns['heads']} 个头"),
        Says(
            "the peak of the naive implementation is above the scores of all heads, (heads, L, L),"
            " and grows quadratically with L",
            "朴素实现的峰值高于所有头的完整分数 (头数, L, L) 并随 L 平方增长",
            holds=all(n > m for n, m in zip(naive, matrix, strict=True))
            and abs(end_slope(lengths, naive) - 2) < 0.25,
        ),
        Says(
            "the peak of F.scaled_dot_product_attention is much lower and grows much more slowly",
            "F.scaled_dot_product_attention 的峰值低得多、增长慢得多",
            holds=all(n > 4 * s for n, s in zip(naive, sdpa, strict=True))
            and end_slope(lengths, sdpa) < end_slope(lengths, naive) - 0.5,
        ),
    ]
