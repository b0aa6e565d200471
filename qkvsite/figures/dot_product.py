"""Chapter 1 figures, drawn from snippets/dot_product/self_similarity.py."""

import matplotlib.pyplot as plt

from qkvsite.figures import figure, heatmap, row_sums, weighted_rows, words

EXAMPLE = "dot_product/self_similarity.py"
# Z[{0}] = Σⱼ A[{0}, j] · X[j] in mathtext; the token {0} (Chinese on the Chinese page) stays outside the $...$,
# and \Sigma_j, not \sum_j, which would set j under the sign, into the tick labels below the title
WS = "$Z[${0}$] = \\Sigma_j A[${0}$, j] \\cdot X[j]$"

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "tokens": {
        "cat": ("猫", "cat"),
        "dog": ("狗", "dog"),
        "car": ("车", "car"),
    },
    "feature": ("特征{}", "feature {}"),
    "x_title": ("X：每行一个词元 ({}×{})", "X: one row per token ({}×{})"),
    "s_title": ("$S = X X^\\top$：两两点积 ({}×{})", "$S = X X^\\top$: all dot products ({}×{})"),
    "a_title": "A = softmax(S, dim=-1) ({}×{})",
    "row_sum": ("行和", "row sum"),
    "times": "${:.3f} \\times X[${}$]$",
    "result": "$Z[${}$]$",
    "ws_title": (WS + "：把 X 的整行按权重相加", WS + ": whole rows of X, weighted"),
    "ws_note": ("每一列：上面三格相加 = 最下面一格", "each column: the three cells above add up to the cell below"),
}


def _labels(ns, lang):
    return [words(TEXT, lang)["tokens"][t] for t in ns["tokens"]]


@figure("similarity-matrix", EXAMPLE)
def similarity_matrix(ns, lang):
    t = words(TEXT, lang)
    X, S = ns["X"].cpu(), ns["S"].cpu()
    n, d = X.shape
    tokens = _labels(ns, lang)
    fig, (ax_x, ax_s) = plt.subplots(1, 2, figsize=(8.4, 3.0), width_ratios=[d, n])
    heatmap(ax_x, X, tokens, [t["feature"].format(k + 1) for k in range(d)], cmap="Greens")
    ax_x.set_title(t["x_title"].format(n, d))
    heatmap(ax_s, S, tokens, tokens)
    ax_s.set_title(t["s_title"].format(*S.shape))
    ax_s.xaxis.tick_top()
    fig.tight_layout()
    return fig


@figure("softmax-weights", EXAMPLE)
def softmax_weights(ns, lang):
    t = words(TEXT, lang)
    S, A = ns["S"].cpu(), ns["A"].cpu()
    tokens = _labels(ns, lang)
    fig, (ax_s, ax_a, ax_r) = plt.subplots(1, 3, figsize=(8.6, 3.0), width_ratios=[3, 3, 1])
    heatmap(ax_s, S, tokens, tokens)
    ax_s.set_title(t["s_title"].format(*S.shape))
    heatmap(ax_a, A, tokens, tokens, fmt="{:.3f}", cmap="Oranges", vmin=0, vmax=1)
    ax_a.set_title(t["a_title"].format(*A.shape))
    row_sums(ax_r, A, tokens, t["row_sum"])
    for ax in (ax_s, ax_a):
        ax.xaxis.tick_top()
    fig.tight_layout()
    return fig


@figure("weighted-sum", EXAMPLE)
def weighted_sum(ns, lang):
    t, tokens = words(TEXT, lang), _labels(ns, lang)
    X, A, Z = ns["X"].cpu(), ns["A"].cpu(), ns["Z"].cpu()
    return weighted_rows(
        A[0],
        X,
        Z[0],
        tokens,
        [t["feature"].format(k + 1) for k in range(X.shape[1])],
        times=t["times"],
        result=t["result"].format(tokens[0]),
        title=t["ws_title"].format(tokens[0]),
        note=t["ws_note"],
    )
