"""Chapter 3 figures, drawn from the scripts in snippets/scaled_dot_product/."""

import matplotlib.pyplot as plt

from qkvsite.figures import figure, heatmap, row_sums, weighted_rows, words

STEPS = "scaled_dot_product/four_steps.py"
WHY_SCALE = "scaled_dot_product/why_scale.py"
MASKING = "scaled_dot_product/masking.py"
# output[{0}] = Σⱼ weights[{0}, j] · V[j] in mathtext, as in dot_product.WS: the token {0} outside the $...$
OUT = "$\\mathrm{{output}}[${0}$] = \\Sigma_j \\mathrm{{weights}}[${0}$, j] \\cdot V[j]$"

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "tokens": {
        "I": ("我", "I"),
        "drink": ("喝", "drink"),
        "green": ("绿", "green"),
        "tea": ("茶", "tea"),
        "<pad>": "<pad>",
    },
    "dim": ("维{}", "dim {}"),
    "query": ("查询（行）", "query (rows)"),
    "key": ("键（列）", "key (columns)"),
    "q_title": "Q ({}×{})",
    "kt_title": "$K^\\top$ ({}×{})",
    "scores_title": "scores = $Q K^\\top$ ({}×{})",
    "scaled_title": "scaled = scores / $\\sqrt{{{}}}$ = scores / {:.3f}",
    "scores_range": ("scores：最小 {:.2f}，最大 {:.2f}", "scores: min {:.2f}, max {:.2f}"),
    "scaled_range": ("scaled：最小 {:.2f}，最大 {:.2f}", "scaled: min {:.2f}, max {:.2f}"),
    "weights_title": "weights = softmax(scaled, dim=-1)",
    "row_sum": ("行和", "row sum"),
    "times": "${:.3f} \\times V[${}$]$",
    "result": "$\\mathrm{{output}}[${}$]$",
    "out_title": (OUT + "：V 的整行按权重相加", OUT + ": whole rows of V"),
    "out_note": ("每一列：上面各格相加 = 最下面一格", "each column: the cells above add up to the cell below"),
    "var_raw": ("$\\mathrm{var}(q \\cdot k)$，不缩放", "$\\mathrm{var}(q \\cdot k)$, unscaled"),
    "var_scaled": (
        "$\\mathrm{var}(q \\cdot k / \\sqrt{d_k})$，缩放后",
        "$\\mathrm{var}(q \\cdot k / \\sqrt{d_k})$, scaled",
    ),
    "var_ref": ("参考线：方差 = $d_k$", "reference: variance = $d_k$"),
    "var_title": (
        "随机 q、k（每个分量均值 0、方差 1）的点积方差",
        "Variance of $q \\cdot k$ for random q, k (entries: mean 0, variance 1)",
    ),
    "var_y": ("方差（对数刻度）", "variance (log scale)"),
    "raw": ("不缩放：$\\mathrm{softmax}(q \\cdot k)$", "unscaled: $\\mathrm{softmax}(q \\cdot k)$"),
    "scaled": (
        "缩放：$\\mathrm{softmax}(q \\cdot k / \\sqrt{d_k})$",
        "scaled: $\\mathrm{softmax}(q \\cdot k / \\sqrt{d_k})$",
    ),
    "uniform": ("均匀分布 $1/{}$", "uniform $1/{}$"),
    "max_title": ("每行最大权重的平均值", "Mean of each row's largest weight"),
    "max_y": ("最大权重", "largest weight"),
    "grad_title": ("softmax 对分数的梯度范数（中位数）", "Norm of softmax's gradient w.r.t. the scores (median)"),
    "grad_y": (
        "$\\Vert \\partial L / \\partial s \\Vert$（对数刻度）",
        "$\\Vert \\partial L / \\partial s \\Vert$ (log scale)",
    ),
    "pad_title": ("填充掩码：第 2 句，<pad> 列被遮住", "Padding mask: sentence 2, <pad> columns hidden"),
    "causal_title": ("因果掩码：第 1 句，只能看自己和前面", "Causal mask: sentence 1, itself and earlier only"),
    "masked": ("遮住", "masked"),
}


def _tokens(names, lang):
    return [words(TEXT, lang)["tokens"][w] for w in names]


def _diverging(ax, values, rows, cols, lim, fmt="{:.2f}"):
    """Heatmap centred on 0."""
    return heatmap(ax, values, rows, cols, fmt=fmt, cmap="RdBu_r", vmin=-lim, vmax=lim)


def _axis_labels(ax, t):
    ax.set_ylabel(t["query"])
    ax.set_xlabel(t["key"])
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()


@figure("sdpa-scores", STEPS)
def scores_figure(ns, lang):
    t = words(TEXT, lang)
    Q, K, S = ns["Q"].cpu(), ns["K"].cpu(), ns["scores"].cpu()
    n, d_k = Q.shape
    tokens = _tokens(ns["tokens"], lang)
    dims = [t["dim"].format(i + 1) for i in range(d_k)]
    fig, (ax_q, ax_k, ax_s) = plt.subplots(1, 3, figsize=(9.6, 3.3), width_ratios=[d_k, n, n])
    heatmap(ax_q, Q, tokens, dims, cmap="Greens")
    ax_q.set_title(t["q_title"].format(n, d_k))
    heatmap(ax_k, K.T, dims, tokens, cmap="Purples")
    ax_k.set_title(t["kt_title"].format(d_k, n))
    lim = float(S.abs().max())
    _diverging(ax_s, S, tokens, tokens, lim)
    ax_s.set_title(t["scores_title"].format(*S.shape), pad=34)
    _axis_labels(ax_s, t)
    fig.tight_layout()
    return fig


@figure("sdpa-scaled", STEPS)
def scaled_figure(ns, lang):
    t = words(TEXT, lang)
    S, scaled = ns["scores"].cpu(), ns["scaled"].cpu()
    d_k = ns["d_k"]
    tokens = _tokens(ns["tokens"], lang)
    lim = float(S.abs().max())  # one colour scale for both: the shrinkage shows
    fig, (ax_s, ax_c) = plt.subplots(1, 2, figsize=(9.0, 4.0))
    _diverging(ax_s, S, tokens, tokens, lim)
    ax_s.set_title(t["scores_title"].format(*S.shape), pad=34)
    ax_s.text(
        0.5,
        -0.06,
        t["scores_range"].format(float(S.min()), float(S.max())),
        transform=ax_s.transAxes,
        ha="center",
        va="top",
    )
    _diverging(ax_c, scaled, tokens, tokens, lim)
    ax_c.set_title(t["scaled_title"].format(d_k, d_k**0.5), pad=34)
    ax_c.text(
        0.5,
        -0.06,
        t["scaled_range"].format(float(scaled.min()), float(scaled.max())),
        transform=ax_c.transAxes,
        ha="center",
        va="top",
    )
    for ax in (ax_s, ax_c):
        _axis_labels(ax, t)
    fig.tight_layout()
    return fig


@figure("sdpa-weights", STEPS)
def weights_figure(ns, lang):
    t = words(TEXT, lang)
    W = ns["weights"].cpu()
    tokens = _tokens(ns["tokens"], lang)
    fig, (ax_w, ax_r) = plt.subplots(1, 2, figsize=(6.6, 4.0), width_ratios=[W.shape[1], 1])
    heatmap(ax_w, W, tokens, tokens, fmt="{:.3f}", cmap="Oranges", vmin=0, vmax=1)
    ax_w.set_title(t["weights_title"], pad=34)
    _axis_labels(ax_w, t)
    row_sums(ax_r, W, tokens, t["row_sum"])
    fig.tight_layout()
    return fig


@figure("sdpa-output", STEPS)
def output_figure(ns, lang):
    t, tokens = words(TEXT, lang), _tokens(ns["tokens"], lang)
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
        figsize=(6.8, 4.0),
    )


@figure("sdpa-variance", WHY_SCALE)
def variance_figure(ns, lang):
    t = words(TEXT, lang)
    d_ks, raw, scaled = ns["d_ks"], ns["raw_var"], ns["scaled_var"]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    ax.plot(d_ks, d_ks, "--", color="grey", label=t["var_ref"])
    ax.plot(d_ks, raw, "o-", color="tab:red", label=t["var_raw"])
    ax.plot(d_ks, scaled, "s-", color="tab:blue", label=t["var_scaled"])
    for d, r, s in zip(d_ks, raw, scaled, strict=True):
        ax.annotate(f"{r:.1f}", (d, r), textcoords="offset points", xytext=(-6, 8), ha="right")
        ax.annotate(f"{s:.2f}", (d, s), textcoords="offset points", xytext=(0, 8), ha="center")
    ax.set_xscale("log", base=2)
    ax.set_xlim(d_ks[0] / 1.6, d_ks[-1] * 1.6)
    ax.set_yscale("log", base=2)
    ax.set_xticks(d_ks, [str(d) for d in d_ks])
    ax.set_ylim(0.5, max(raw) * 2)
    ax.set_xlabel("$d_k$")
    ax.set_ylabel(t["var_y"])
    ax.set_title(t["var_title"])
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left")
    return fig


@figure("sdpa-saturation", WHY_SCALE)
def saturation_figure(ns, lang):
    t = words(TEXT, lang)
    d_ks, n_keys = ns["d_ks"], ns["n_keys"]
    max_weight, grad_norm = ns["max_weight"], ns["grad_norm"]
    fig, (ax_m, ax_g) = plt.subplots(1, 2, figsize=(9.6, 4.0))
    styles = {"raw": ("o-", "tab:red"), "scaled": ("s-", "tab:blue")}
    for name, (marker, color) in styles.items():
        ax_m.plot(d_ks, max_weight[name], marker, color=color, label=t[name])
        ax_g.plot(d_ks, grad_norm[name], marker, color=color, label=t[name])
        # scaled values above their points, unscaled below, so that they never overlap
        offset, va = ((0, 7), "bottom") if name == "scaled" else ((0, -8), "top")
        for i, (d, m, g) in enumerate(zip(d_ks, max_weight[name], grad_norm[name], strict=True)):
            for ax, value, fmt in ((ax_m, m, "{:.3f}"), (ax_g, g, "{:.1e}")):
                where = {"xytext": offset, "ha": "center", "va": va}
                if ax is ax_g and name != "scaled" and i > 0:  # the falling line leaves each point down-right:
                    where = {"xytext": (-5, -4), "ha": "right", "va": "top"}  # its value goes down-left
                ax.annotate(fmt.format(value), (d, value), textcoords="offset points", color=color, fontsize=9, **where)
    ax_m.axhline(1 / n_keys, ls=":", color="grey", label=t["uniform"].format(n_keys))
    ax_m.set_ylim(0, 1.08)
    ax_m.set_ylabel(t["max_y"])
    ax_m.set_title(t["max_title"])
    ax_g.set_yscale("log")
    ax_g.set_ylim(min(grad_norm["raw"]) / 5, 3)
    ax_g.set_ylabel(t["grad_y"])
    ax_g.set_title(t["grad_title"])
    for ax in (ax_m, ax_g):
        ax.set_xscale("log", base=2)
        ax.set_xlim(d_ks[0] / 1.5, d_ks[-1] * 1.5)
        ax.set_xticks(d_ks, [str(d) for d in d_ks])
        ax.set_xlabel("$d_k$")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower left" if ax is ax_g else "center right")
    fig.tight_layout()
    return fig


@figure("sdpa-masks", MASKING)
def masks_figure(ns, lang):
    t = words(TEXT, lang)
    pad_weights, causal_weights = ns["pad_weights"][1].cpu(), ns["causal_weights"].cpu()
    padded = _tokens(ns["sentences"][1], lang)
    full = _tokens(ns["sentences"][0], lang)
    hidden = {"pad": ns["pad"][1].cpu(), "causal": ns["causal"].cpu()}
    fig, (ax_p, ax_c) = plt.subplots(1, 2, figsize=(9.0, 4.3))
    for ax, weights, tokens, title, key in (
        (ax_p, pad_weights, padded, t["pad_title"], "pad"),
        (ax_c, causal_weights, full, t["causal_title"], "causal"),
    ):
        heatmap(ax, weights, tokens, tokens, fmt="{:.3f}", cmap="Oranges", vmin=0, vmax=1)
        mask = hidden[key]
        for i in range(weights.shape[0]):
            for j in range(weights.shape[1]):
                is_hidden = bool(mask[j]) if key == "pad" else bool(mask[i, j])
                if is_hidden:
                    ax.add_patch(
                        plt.Rectangle(
                            (j - 0.5, i - 0.5),
                            1,
                            1,
                            fill=False,
                            hatch="///",
                            ec="grey",
                            lw=0,
                        )
                    )
                    ax.text(
                        j,
                        i + 0.3,
                        t["masked"],
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="grey",
                    )
        ax.set_title(title, pad=34)
        _axis_labels(ax, t)
    fig.tight_layout()
    return fig
