"""FAQ figures, drawn from the values that snippets/faq/*.py compute."""

import matplotlib.pyplot as plt

from qkvsite.figures import figure, palette, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "var_title": ("$q \\cdot k$ 的方差随 $d_k$ 增长", "The variance of $q \\cdot k$ grows with $d_k$"),
    "raw": "$\\mathrm{var}(q \\cdot k)$",
    "scaled": "$\\mathrm{var}(q \\cdot k / \\sqrt{d_k})$",
    "guide": "$y = d_k$",
    "peak_title": (
        "一行 softmax 中最大的权重（{} 个键，取平均）",
        "Largest weight in a softmax row ({} keys, averaged)",
    ),
    "unscaled": ("不缩放", "unscaled"),
    "with_scale": ("除以 $\\sqrt{d_k}$", "divided by $\\sqrt{d_k}$"),
    "over_dk": ("除以 $d_k$", "divided by $d_k$"),
    "uniform": ("均匀分布 $1/{}$", "uniform $1/{}$"),
    "bleu": ("BLEU（开发集，越高越好）", "BLEU (dev set, higher is better)"),
    "ppl": ("困惑度 PPL（开发集，越低越好）", "perplexity PPL (dev set, lower is better)"),
    "heads": (
        "头数 $H$ 与每头维度 $d_k$（$H \\cdot d_k = 512$）",
        "heads $H$ and width per head $d_k$ ($H \\cdot d_k = 512$)",
    ),
    "base": "base",
    "table_note": (
        "数据：Vaswani et al. 2017 表 3，base 与 (A) 行，英德 newstest2013（开发集）",
        "Data: Vaswani et al. 2017, Table 3, base and rows (A), English-German newstest2013 (dev set)",
    ),
    "flops_title": ("FLOP 计数（FlopCounterMode）", "FLOP count (FlopCounterMode)"),
    "time_title": ("实测时间（{}，{} 次取最短）", "Measured time ({}, best of {})"),
    "one_thread": ("CPU 单线程", "CPU, one thread"),
    "length": ("序列长度 L", "sequence length L"),
    "flops": "FLOPs",
    "seconds": ("时间（秒）", "time (s)"),
    "measured": ("实测", "measured"),
    "fit": ("最后三点拟合斜率 {:.2f}", "fitted slope of the last three points {:.2f}"),
    "slope2": ("斜率 2 参考线", "slope 2 guide"),
    "mem_title": (
        "一次注意力调用的峰值内存（{} 个头，$d_k = {}$）",
        "Peak memory of one attention call ({} heads, $d_k = {}$)",
    ),
    "naive": (
        "朴素实现：$\\mathrm{softmax}(q k^\\top / \\sqrt{d})\\, v$",
        "naive: $\\mathrm{softmax}(q k^\\top / \\sqrt{d})\\, v$",
    ),
    "sdpa": "F.scaled_dot_product_attention",
    "one_matrix": ("一个 (头数, L, L) 分数矩阵", "one (heads, L, L) score matrix"),
    "bytes": ("字节", "bytes"),
    "cpu_method": (
        "测量：CPU，按时间顺序重放 torch.profiler 的内存记录",
        "measured on CPU: torch.profiler memory records, in time order",
    ),
    "cuda_method": ("测量：CUDA，torch.cuda.max_memory_allocated", "measured on CUDA: torch.cuda.max_memory_allocated"),
}


@figure("faq-scaling-variance", "faq/q08_scaling_variance.py")
def scaling_variance(ns, lang):
    t = words(TEXT, lang)
    d_ks = ns["d_ks"]
    fig, (ax_v, ax_p) = plt.subplots(1, 2, figsize=(10.0, 3.8))
    ax_v.plot(d_ks, d_ks, ":", color="grey", label=t["guide"])
    ax_v.plot(d_ks, ns["raw_var"], "o-", color="tab:red", label=t["raw"])
    ax_v.plot(d_ks, ns["scaled_var"], "s-", color="tab:blue", label=t["scaled"])
    for d_k, raw, scaled in zip(d_ks, ns["raw_var"], ns["scaled_var"], strict=True):
        ax_v.annotate(
            f"{raw:.1f}",
            (d_k, raw),
            textcoords="offset points",
            xytext=(0, 8),
            ha="center",
            fontsize=9,
            color="tab:red",
        )
        ax_v.annotate(
            f"{scaled:.2f}",
            (d_k, scaled),
            textcoords="offset points",
            xytext=(0, -15),
            ha="center",
            fontsize=9,
            color="tab:blue",
        )
    ax_v.set_xscale("log", base=2)
    ax_v.set_yscale("log", base=2)
    ax_v.set_xticks(d_ks, [str(d) for d in d_ks])
    ax_v.set_ylim(0.25, max(ns["raw_var"]) * 4)
    ax_v.set_xlabel("$d_k$")
    ax_v.set_title(t["var_title"])
    ax_v.legend(loc="upper left", fontsize=9)

    n_keys = ns["n_keys"]
    peak = ns["peak"]
    ax_p.plot(d_ks, peak["none"], "o-", color="tab:red", label=t["unscaled"])
    ax_p.plot(d_ks, peak["sqrt"], "s-", color="tab:blue", label=t["with_scale"])
    ax_p.plot(d_ks, peak["d_k"], "^-", color="tab:green", label=t["over_dk"])
    ax_p.axhline(1 / n_keys, ls=":", color="grey", label=t["uniform"].format(n_keys))
    ax_p.set_xscale("log", base=2)
    ax_p.set_xticks(d_ks, [str(d) for d in d_ks])
    ax_p.set_ylim(0, 1.05)
    ax_p.set_xlabel("$d_k$")
    ax_p.set_title(t["peak_title"].format(n_keys))
    ax_p.legend(loc="center right", fontsize=9)
    fig.tight_layout()
    return fig


@figure("faq-heads-table3", "faq/q12_heads_table3.py")
def heads_table3(ns, lang):
    t = words(TEXT, lang)
    rows = ns["rows"]  # sorted by h
    labels = [f"$H = {h}$\n$d_k = {d_k}$" for _, h, d_k, _, _, _ in rows]
    colors = ["tab:orange" if name == "base" else "tab:blue" for name, *_ in rows]
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(10.0, 3.9))
    for ax, column, fmt, title in [
        (ax_b, 5, "{:.1f}", t["bleu"]),
        (ax_p, 4, "{:.2f}", t["ppl"]),
    ]:
        values = [r[column] for r in rows]
        bars = ax.bar(range(len(rows)), values, color=colors)
        for bar, v in zip(bars, values, strict=True):
            ax.text(
                bar.get_x() + bar.get_width() / 2,
                v,
                fmt.format(v),
                ha="center",
                va="bottom",
            )
        lo, hi = min(values), max(values)
        ax.set_ylim(lo - (hi - lo) * 1.2, hi + (hi - lo) * 0.4)
        ax.set_xticks(range(len(rows)), labels)
        ax.set_title(title)
        ax.set_xlabel(t["heads"])
        for spine in ("top", "right"):
            ax.spines[spine].set_visible(False)
    base = [i for i, r in enumerate(rows) if r[0] == "base"][0]
    for ax in (ax_b, ax_p):
        ax.get_xticklabels()[base].set_color("tab:orange")
    fig.text(0.5, -0.02, t["table_note"], ha="center", fontsize=9, color=palette()["muted"])
    fig.tight_layout()
    return fig


def _loglog(ax, xs, ys, fit, color, label):
    ax.plot(xs, ys, "o-", color=color, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.text(
        0.03,
        0.95,
        fit,
        transform=ax.transAxes,
        va="top",
        fontsize=10,
        bbox={"facecolor": palette()["paper"], "edgecolor": palette()["rule"]},
    )


@figure("faq-attention-cost", "faq/q18_quadratic_cost.py", measured=True)
def attention_cost(ns, lang):
    t = words(TEXT, lang)
    slope = ns["fitted_slope"]
    lengths, flops = ns["lengths"], ns["flops"]
    timed, times = ns["timed_lengths"], ns["times"]
    fig, (ax_f, ax_t) = plt.subplots(1, 2, figsize=(10.0, 3.8))
    _loglog(
        ax_f,
        lengths,
        flops,
        t["fit"].format(slope(lengths[-3:], flops[-3:])),
        "tab:purple",
        t["flops"],
    )
    ax_f.set_title(t["flops_title"])
    ax_f.set_ylabel(t["flops"])
    _loglog(
        ax_t,
        timed,
        times,
        t["fit"].format(slope(timed[-3:], times[-3:])),
        "tab:green",
        t["measured"],
    )
    guide = [times[-1] * (L / timed[-1]) ** 2 for L in timed]
    ax_t.plot(timed, guide, ":", color="grey", label=t["slope2"])
    ax_t.legend(loc="lower right", fontsize=9)
    where = t["one_thread"] if ns["device"] == "cpu" else "CUDA"
    ax_t.set_title(t["time_title"].format(where, ns["repeats"]))
    ax_t.set_ylabel(t["seconds"])
    for ax in (ax_f, ax_t):
        ax.set_xlabel(t["length"])
    fig.tight_layout()
    return fig


@figure("faq-score-memory", "faq/q19_score_memory.py")
def score_memory(ns, lang):
    t = words(TEXT, lang)
    lengths = ns["lengths"]
    method = t["cuda_method"] if ns["device"] == "cuda" else t["cpu_method"]
    fig, ax = plt.subplots(figsize=(8.0, 4.2))
    mib = 2**20
    series = [
        (ns["naive_peak"], "o-", "tab:red", t["naive"]),
        (ns["sdpa_peak"], "s-", "tab:blue", t["sdpa"]),
        (ns["one_score_matrix"], ":", "grey", t["one_matrix"]),
    ]
    for values, style, color, label in series:
        ax.plot(lengths, [v / mib for v in values], style, color=color, label=label)
    for values, color in [(ns["naive_peak"], "tab:red"), (ns["sdpa_peak"], "tab:blue")]:
        for L, v in zip(lengths, values, strict=True):
            ax.annotate(
                f"{v / mib:.1f} MiB",
                (L, v / mib),
                textcoords="offset points",
                xytext=(0, 7),
                ha="center",
                fontsize=8,
                color=color,
            )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(lengths, [str(L) for L in lengths])
    top = max(ns["naive_peak"]) / mib
    ax.set_ylim(top=top * 3)
    ax.set_xlabel(t["length"])
    ax.set_ylabel("MiB")
    ax.set_title(t["mem_title"].format(ns["heads"], ns["d"]))
    ax.text(
        0.98,
        0.03,
        method,
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=9,
        color=palette()["muted"],
    )
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    return fig
