"""Chapter 1 figures, drawn from snippets/dot_product/self_similarity.py."""

import matplotlib.pyplot as plt

from qkvsite.figures import Says, figure, heatmap, row_sums, says, weighted_rows, words

EXAMPLE = "dot_product/self_similarity.py"
ROW = 0  # the row of Z that weighted-sum draws (the snippet's whole_rows section builds z0)
# Z[{0}] = Σⱼ A[{0}, j] · X[j] in mathtext; the token {0} (Chinese on the Chinese page) stays
# outside the $...$, and \Sigma_j, not \sum_j, which would set j under the sign, into the tick
# labels below the title
WS = "$Z[${0}$] = \\Sigma_j A[${0}$, j] \\cdot X[j]$"

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "tokens": {"cat": ("猫", "cat"), "dog": ("狗", "dog"), "car": ("车", "car")},
    "feature": ("特征", "feature"),
    "x_title": "X ({}×{})",
    "s_title": "$S = X X^\\top$ ({}×{})",
    "a_title": "A = softmax(S, dim=-1)",
    "row_sum": ("行和", "row sum"),
    "times": "${:.3f} \\times X[${}$]$",
    "result": "$Z[${}$]$",
    "ws_title": (WS + "：把 X 的整行按权重相加", WS + ": whole rows of X, weighted"),
    "ws_note": (
        "每一列：上面三格相加 = 最下面一格",
        "each column: the three cells above add up to the cell below",
    ),
}


def _scores(ax, ns, lang):
    """S = X Xᵀ, labels on top; returns the labels and the page's tokens."""
    t = words(TEXT, lang)
    tokens = [t["tokens"][token] for token in ns["tokens"]]
    heatmap(ax, ns["S"].cpu(), tokens, tokens)
    ax.set_title(t["s_title"].format(*ns["S"].shape))
    ax.xaxis.tick_top()
    return t, tokens


@figure("similarity-matrix", EXAMPLE)
def similarity_matrix(ns, lang):
    X = ns["X"].cpu()
    fig, (ax_x, ax_s) = plt.subplots(
        1, 2, figsize=(5.6, 2.7), width_ratios=[X.shape[1], X.shape[0]]
    )
    t, tokens = _scores(ax_s, ns, lang)
    heatmap(ax_x, X, tokens, range(1, X.shape[1] + 1), cmap="Greens")
    ax_x.set_title(t["x_title"].format(*X.shape))
    ax_x.set_xlabel(t["feature"])
    fig.tight_layout(w_pad=2)
    return fig


@says("similarity-matrix")
def similarity_matrix_says(ns):
    (L, d), (rows, cols) = ns["X"].shape, ns["S"].shape
    return [
        Says(f"the {L}×{d} matrix X", f"{L}×{d} 的 X"),
        Says(f"the {rows}×{cols} matrix S = X Xᵀ", f"{rows}×{cols} 的 S = X Xᵀ"),
    ]


@figure("softmax-weights", EXAMPLE)
def softmax_weights(ns, lang):
    A = ns["A"].cpu()
    fig, (ax_s, ax_a, ax_r) = plt.subplots(1, 3, figsize=(5.8, 2.6), width_ratios=[3, 3, 1])
    t, tokens = _scores(ax_s, ns, lang)
    heatmap(ax_a, A, [""] * len(tokens), tokens, fmt="{:.3f}", cmap="Oranges", vmin=0, vmax=1)
    ax_a.set_title(t["a_title"])
    ax_a.xaxis.tick_top()
    row_sums(ax_r, A, [""] * len(tokens), t["row_sum"])
    fig.tight_layout(w_pad=0.5)
    return fig


@figure("weighted-sum", EXAMPLE)
def weighted_sum(ns, lang):
    t = words(TEXT, lang)
    tokens = [t["tokens"][token] for token in ns["tokens"]]
    X, A, Z = ns["X"].cpu(), ns["A"].cpu(), ns["Z"].cpu()
    features = [str(k + 1) for k in range(X.shape[1])]
    title, result = t["ws_title"].format(tokens[ROW]), t["result"].format(tokens[ROW])
    fig = weighted_rows(
        A[ROW],
        X,
        Z[ROW],
        tokens,
        features,
        times=t["times"],
        result=result,
        title=title,
        note=t["ws_note"],
    )
    fig.axes[0].set_xlabel(t["feature"])  # above the numbered columns, under the title
    fig.axes[0].xaxis.set_label_position("top")
    return fig


@says("weighted-sum")
def weighted_sum_says(ns):
    token = {lang: words(TEXT, lang)["tokens"][ns["tokens"][ROW]] for lang in ("en", "zh")}
    return [
        Says(f"The output row for {token['en']}", f"{token['zh']}这一行的输出"),
        Says(f"row {ROW} of Z", f"Z 的第 {ROW} 行"),
        Says(f"$A[{ROW}, j] \\cdot X[j]$", f"$A[{ROW}, j] \\cdot X[j]$"),
        Says(f"$Z[{ROW}]$", f"$Z[{ROW}]$"),
    ]
