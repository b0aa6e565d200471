"""Chapter 3 figures, drawn from the scripts in snippets/scaled_dot_product/."""

import math

import matplotlib.pyplot as plt
import torch

from qkvsite.figures import Says, figure, heatmap, row_sums, says, weighted_rows, words

STEPS = "scaled_dot_product/four_steps.py"
WHY_SCALE = "scaled_dot_product/why_scale.py"
MASKING = "scaled_dot_product/masking.py"

# each label in the two languages, (Chinese, English), or one string for both; plain text, no
# mathtext: its subscripts and superscripts would be too small on a phone
TEXT = {
    "dim": ("维{}", "dim {}"),
    "query": ("查询（行）", "query (rows)"),
    "key": ("键（列）", "key (columns)"),
    "q_title": "Q ({}×{})",
    "kt_title": "Kᵀ ({}×{})",
    "scores_title": "scores = Q Kᵀ ({}×{})",
    "scaled_title": "scaled = scores / √{}",
    "range": ("最小 {:.2f}，最大 {:.2f}", "min {:.2f}, max {:.2f}"),
    "weights_title": "weights = softmax(scaled, dim=-1)",
    "row_sum": ("行和", "row sum"),
    "times": "${:.3f} \\times V[${}$]$",  # in mathtext, as chapter 1's figure (dot_product.WS)
    "result": "$Z[${}$]$",
    "out_title": "$Z[${0}$] = \\Sigma_j A[${0}$, j] \\cdot V[j]$",
    "out_note": (
        "每一列：上面各格相加 = 最下面一格",
        "each column: the cells above add up to the cell below",
    ),
    "var_raw": ("var(q·k)，不缩放", "var(q·k), unscaled"),
    "var_scaled": ("var(q·k / √dₖ)，缩放后", "var(q·k / √dₖ), scaled"),
    "var_ref": ("参考线：方差 = dₖ", "reference: variance = dₖ"),
    "var_y": ("方差（对数刻度）", "variance (log scale)"),
    "raw": ("不缩放", "unscaled"),
    "scaled": ("缩放", "scaled"),
    "uniform": ("均匀分布 1/{}", "uniform 1/{}"),
    "max_title": ("每行最大权重的平均值", "Mean of each row's largest weight"),
    "grad_title": (
        "softmax 对分数的梯度范数（中位数）",
        "Norm of softmax's gradient w.r.t. the scores (median)",
    ),
    "grad_y": ("‖∂L/∂s‖（对数刻度）", "‖∂L/∂s‖ (log scale)"),
    "pad_title": ("填充掩码（第 2 句）", "padding mask (sentence 2)"),
    "causal_title": ("因果掩码（第 1 句）", "causal mask (sentence 1)"),
}


def _diverging(ax, values, rows, cols, lim):
    """Heatmap centred on 0, column labels on top."""
    heatmap(ax, values, rows, cols, cmap="RdBu_r", vmin=-lim, vmax=lim)
    ax.xaxis.tick_top()


def _dk_axis(ax, d_ks):
    """d_k on a log scale, one tick per d_k measured."""
    ax.set_xscale("log", base=2)
    # room for the values written beside the first and last points
    ax.set_xlim(d_ks[0] / 2.6, d_ks[-1] * 2.2)
    ax.set_xticks(d_ks, [str(d) for d in d_ks])
    ax.grid(True, alpha=0.3)


@figure("sdpa-scores", STEPS)
def scores_figure(ns, lang):
    t = words(TEXT, lang)
    Q, K, S = ns["Q"].cpu(), ns["K"].cpu(), ns["scores"].cpu()
    L, d_k = Q.shape
    tokens = list(ns["tokens"])
    dims = [t["dim"].format(i + 1) for i in range(d_k)]
    # laid out as a product: each score where its row of Q meets its column of Kᵀ
    fig, ((ax_0, ax_k), (ax_q, ax_s)) = plt.subplots(
        2, 2, figsize=(6.0, 5.9), width_ratios=[d_k, L], height_ratios=[d_k, L]
    )
    ax_0.axis("off")
    heatmap(ax_k, K.T, dims, tokens, cmap="Purples")
    ax_k.xaxis.tick_top()
    ax_k.set_title(t["kt_title"].format(d_k, L))
    heatmap(ax_q, Q, tokens, dims, cmap="Greens")
    ax_q.set_title(t["q_title"].format(L, d_k))
    # its rows and columns: those of Q and Kᵀ
    _diverging(ax_s, S, [""] * L, [""] * L, float(S.abs().max()))
    ax_s.set_title(t["scores_title"].format(L, L))
    for ax, anchor in ((ax_k, "SW"), (ax_q, "NE"), (ax_s, "NW")):
        ax.set_anchor(anchor)  # the cells of the three line up
    fig.tight_layout()
    return fig


@says("sdpa-scores")
def scores_says(ns):
    S = ns["scores"].cpu()
    return [
        Says(
            "the score matrix is not symmetric",
            "这里的分数矩阵一般不对称",
            holds=not torch.allclose(S, S.T),
        )
    ]


@figure("sdpa-scaled", STEPS)
def scaled_figure(ns, lang):
    t = words(TEXT, lang)
    S, scaled = ns["scores"].cpu(), ns["scaled"].cpu()
    tokens = list(ns["tokens"])
    lim = float(S.abs().max())  # one colour scale for both: the shrinkage shows
    fig, axes = plt.subplots(1, 2, figsize=(5.8, 3.3), sharey=True)
    titles = (t["scores_title"].format(*S.shape), t["scaled_title"].format(ns["d_k"]))
    for ax, values, title in zip(axes, (S, scaled), titles, strict=True):
        _diverging(ax, values, tokens, tokens, lim)
        ax.set_title(title)
        ax.set_xlabel(t["range"].format(float(values.min()), float(values.max())))
    fig.tight_layout()
    return fig


@says("sdpa-scaled")
def scaled_says(ns):
    S, scaled = ns["scores"].cpu(), ns["scaled"].cpu()
    ratio = float(S.max() - S.min()) / float(scaled.max() - scaled.min())
    return [
        Says(
            "the order of the scores stays the same",
            "分数的大小顺序不变",
            holds=bool((S.argsort(dim=-1) == scaled.argsort(dim=-1)).all()),
        ),
        Says(
            "their range is narrower by a factor of $\\sqrt{d_k}$",
            "范围却缩小为原来的 $\\sqrt{d_k}$ 分之一",
            holds=math.isclose(ratio, ns["d_k"] ** 0.5, rel_tol=1e-4),
        ),
    ]


@figure("sdpa-weights", STEPS)
def weights_figure(ns, lang):
    t = words(TEXT, lang)
    W = ns["weights"].cpu()
    tokens = list(ns["tokens"])
    fig, (ax_w, ax_r) = plt.subplots(1, 2, figsize=(5.6, 3.8), width_ratios=[W.shape[1], 1])
    heatmap(ax_w, W, tokens, tokens, fmt="{:.3f}", cmap="Oranges", vmin=0, vmax=1)
    ax_w.set_title(t["weights_title"], pad=34)
    ax_w.set_ylabel(t["query"])
    ax_w.set_xlabel(t["key"])
    ax_w.xaxis.set_label_position("top")
    ax_w.xaxis.tick_top()
    row_sums(ax_r, W, tokens, t["row_sum"])
    fig.tight_layout()
    return fig


@says("sdpa-weights")
def weights_says(ns):
    sums = ns["weights"].cpu().sum(dim=-1)
    total = round(float(sums.mean()), 3)
    return [
        Says(
            f"each row sums to {total:g}",
            f"每行加起来等于 {total:g}",
            holds=torch.allclose(sums, torch.full_like(sums, total), atol=1e-5),
        )
    ]


@figure("sdpa-output", STEPS)
def output_figure(ns, lang):
    t, tokens = words(TEXT, lang), list(ns["tokens"])
    W, V, out = ns["weights"].cpu(), ns["V"].cpu(), ns["output"].cpu()
    i = 1
    return weighted_rows(
        W[i],
        V,
        out[i],
        tokens,
        [t["dim"].format(c + 1) for c in range(V.shape[1])],
        times=t["times"],
        result=t["result"].format(tokens[i]),
        title=t["out_title"].format(tokens[i]),
        note=t["out_note"],
        diverging=True,
        figsize=(5.8, 4.0),
    )


@figure("sdpa-variance", WHY_SCALE)
def variance_figure(ns, lang):
    t = words(TEXT, lang)
    d_ks, raw, scaled = ns["d_ks"], ns["raw_var"], ns["scaled_var"]
    fig, ax = plt.subplots(figsize=(5.8, 3.8))
    ax.plot(d_ks, d_ks, "--", color="grey", label=t["var_ref"])
    ax.plot(d_ks, raw, "o-", color="tab:red", label=t["var_raw"])
    ax.plot(d_ks, scaled, "s-", color="tab:blue", label=t["var_scaled"])
    for d, r, s in zip(d_ks, raw, scaled, strict=True):
        ax.annotate(f"{r:.0f}", (d, r), textcoords="offset points", xytext=(7, -3), va="top")
        ax.annotate(f"{s:.2f}", (d, s), textcoords="offset points", xytext=(0, 8), ha="center")
    _dk_axis(ax, d_ks)
    ax.set_yscale("log", base=2)
    ax.set_yticks([1, *d_ks], [str(v) for v in [1, *d_ks]])
    ax.set_ylim(0.5, max(raw) * 2)
    ax.set_ylabel(t["var_y"])
    ax.set_xlabel("dₖ")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig


@says("sdpa-variance")
def variance_says(ns):
    d_ks, raw, scaled = ns["d_ks"], ns["raw_var"], ns["scaled_var"]
    # slope of log var against log d_k, least squares: 1 for a variance proportional to d_k
    x, y = torch.tensor(d_ks).double().log(), torch.tensor(raw).double().log()
    slope = float(((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum())
    linear = abs(slope - 1) < 0.05
    along = all(0.8 < r / d < 1.25 for r, d in zip(raw, d_ks, strict=True))  # the line var = d_k
    near = round(sum(scaled) / len(scaled))
    flat = all(abs(v - near) < 0.1 for v in scaled)
    return [
        Says(
            'grows along the line "variance equals d_k"',
            "沿着“方差等于 d_k”的参考线增长",
            holds=along,
        ),
        Says(
            f"the scaled variance stays near {near}",
            f"缩放后的方差始终在 {near} 附近",
            holds=flat,
        ),
        Says("grows linearly with $d_k$", "随 $d_k$ 线性增长", holds=linear and along),
        Says(
            f"divided by $\\sqrt{{d_k}}$, it stays near {near}",
            f"除以 $\\sqrt{{d_k}}$ 后稳定在 {near} 附近",
            holds=flat,
        ),
    ]


@figure("sdpa-saturation", WHY_SCALE)
def saturation_figure(ns, lang):
    t = words(TEXT, lang)
    d_ks, n_keys = ns["d_ks"], ns["n_keys"]
    fig, (ax_m, ax_g) = plt.subplots(2, 1, figsize=(5.8, 6.0), sharex=True)
    # each value beside its point (dx, dy in points), on a side that its line leaves free
    for ax, values, fmt, offsets in (
        (ax_m, ns["max_weight"], "{:.3f}", {"raw": (5, -5), "scaled": (0, -7)}),
        (ax_g, ns["grad_norm"], "{:.1e}", {"raw": (-5, -5), "scaled": (0, 7)}),
    ):
        for name, marker, color in (("raw", "o-", "tab:red"), ("scaled", "s-", "tab:blue")):
            ax.plot(d_ks, values[name], marker, color=color, label=t[name])
            dx, dy = offsets[name]
            ha, va = {0: "center", 5: "left", -5: "right"}[dx], "top" if dy < 0 else "bottom"
            for d, v in zip(d_ks, values[name], strict=True):
                ax.annotate(
                    fmt.format(v),
                    (d, v),
                    (dx, dy),
                    textcoords="offset points",
                    color=color,
                    fontsize=10,
                    ha=ha,
                    va=va,
                )
        _dk_axis(ax, d_ks)
    ax_m.axhline(1 / n_keys, ls=":", color="grey", label=t["uniform"].format(n_keys))
    ax_m.set_ylim(0, 1.1)
    ax_m.set_title(t["max_title"])
    ax_m.legend(loc="center right")
    ax_g.set_yscale("log")
    ax_g.yaxis.set_major_formatter("{x:.0e}")
    ax_g.set_ylim(min(ns["grad_norm"]["raw"]) / 5, 3)
    ax_g.set_ylabel(t["grad_y"])
    ax_g.set_title(t["grad_title"])
    ax_g.set_xlabel("dₖ")
    fig.tight_layout()
    return fig


@says("sdpa-saturation")
def saturation_says(ns):
    top, grad = ns["max_weight"], ns["grad_norm"]

    def monotone(values, sign):  # sign 1: increasing, -1: decreasing
        return all(sign * (b - a) > 0 for a, b in zip(values[:-1], values[1:], strict=True))

    def flat(values):  # within 10% of each other
        return max(values) / min(values) < 1.1

    one_hot = round(top["raw"][-1])  # what the raw curve approaches: a one-hot row's largest weight
    saturates = monotone(top["raw"], 1) and one_hot - top["raw"][-1] < 0.05
    vanishes = monotone(grad["raw"], -1) and grad["raw"][0] / grad["raw"][-1] > 100
    steady = flat(top["scaled"]) and flat(grad["scaled"])
    return [
        Says(
            f"the mean largest weight, which approaches {one_hot} without scaling",
            f"每行最大权重的平均值，不缩放时逼近 {one_hot}",
            holds=saturates,
        ),
        Says(
            "the median gradient norm, which falls by orders of magnitude without scaling",
            "梯度范数的中位数，不缩放时下降几个数量级",
            holds=vanishes,
        ),
        Says("both flat with scaling", "缩放后两者都基本不变", holds=steady),
        Says(
            "the larger $d_k$, the closer softmax gets to one-hot and the smaller the gradient",
            "$d_k$ 越大，softmax 越接近 one-hot，梯度越小",
            holds=monotone(top["raw"], 1) and monotone(grad["raw"], -1),
        ),
        Says(
            "with scaling, neither curve changes much",
            "缩放后两条曲线都基本不变",
            holds=steady,
        ),
    ]


@figure("sdpa-masks", MASKING)
def masks_figure(ns, lang):
    t = words(TEXT, lang)
    L = len(ns["sentences"][0])
    fig, axes = plt.subplots(1, 2, figsize=(5.8, 3.3))
    for ax, weights, sentence, hidden, title in zip(
        axes,
        (ns["pad_weights"][1], ns["causal_weights"]),
        (ns["sentences"][1], ns["sentences"][0]),
        # the padding mask hides the same keys from every query
        (ns["pad"][1].expand(L, L), ns["causal"]),
        (t["pad_title"], t["causal_title"]),
        strict=True,
    ):
        tokens = list(sentence)  # the same names in both editions
        heatmap(ax, weights.cpu(), tokens, tokens, fmt="{:.2f}", cmap="Oranges", vmin=0, vmax=1)
        for i, j in hidden.nonzero().tolist():
            ax.add_patch(
                plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", ec="grey", lw=0)
            )
        ax.xaxis.tick_top()
        ax.set_title(title)
    fig.tight_layout()
    return fig
