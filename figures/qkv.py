"""Chapter 2 figures, drawn from snippets/qkv/verb_subject.py, projections.py and
cross_attention.py."""

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Rectangle

from qkvsite.figures import Says, figure, heatmap, palette, says, words

ROLES = "qkv/verb_subject.py"
SELF = "qkv/projections.py"
CROSS = "qkv/cross_attention.py"

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "token": ("词元 {}", "token {}"),
    "x_title": ("X：输入（{}×{}）", "X: input ({}×{})"),
    "w_title": "× ${}$ ({}×{})",
    "out_title": "${0} = X {1}$ ({2}×{3})",
    "words": {"dog": ("狗", "dog"), "bites": ("咬", "bites"), "man": ("人", "man")},
    "q_title": ("查询 q（咬）：找什么", "query q of bites: what it looks for"),
    "q_cols": (["名词？", "主语？"], ["noun?", "subject?"]),
    "k_title": ("键 k：能被找到的标签", "keys k: labels"),
    "k_cols": (["名词", "主语"], ["noun", "subject"]),
    "score": "q·k",
    "weight": ("权重", "weight"),
    "val_title": ("值 v：交出的内容", "values v: content"),
    "v_cols": (["动物", "人"], ["animal", "human"]),
    "z_title": ("咬的输出 = Σ 权重 × v", "output of bites = Σ weight × v"),
    "s_title": "$S = Q K^\\top / \\sqrt{d_k}$",
    "a_title": "A = softmax(S, dim=-1)",
    "s_note": ("方框：$S[{0}, {1}] \\neq S[{1}, {0}]$", "boxed: $S[{0}, {1}] \\neq S[{1}, {0}]$"),
    "dec": ("解码器 i", "decoder i"),
    "enc": ("编码器 j", "encoder j"),
    "ca_title": "$A = \\mathrm{{softmax}}(Q K^\\top / \\sqrt{{d_k}})$ ({}×{})",
    "v_title": ("V（{}×{}）", "V ({}×{})"),
    "o_title": ("输出 $A V$（{}×{}）", "output $A V$ ({}×{})"),
    "ca_sources": (
        "Q（{}×{}）：来自解码器\nK（{}×{}）：来自编码器输出\nV（{}×{}）：来自编码器输出",
        "Q ({}×{}): from the decoder\nK ({}×{}): from the encoder\nV ({}×{}): from the encoder",
    ),
}
BOXED = (0, 2)  # qkv-scores boxes S[i, j] and S[j, i]
SUB = 13  # labels with a subscript ($q_0$): mathtext sets it at 70%, 9 pt


def _signed(ax, values, rows=(), cols=()):
    """Heatmap of a signed matrix (blue negative, red positive, 0 white), labels left and top."""
    values = values.detach().cpu()
    vmax = float(values.abs().max())
    rows, cols = list(rows) or [""] * values.shape[0], list(cols) or [""] * values.shape[1]
    heatmap(ax, values, rows, cols, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    for text, v in zip(ax.texts, values.flatten().tolist(), strict=True):
        text.set_color("white" if abs(v) > 0.6 * vmax else "black")
        text.set_text(text.get_text().replace("-0.00", "0.00"))
    ax.xaxis.tick_top()
    ax.set_aspect("auto")  # cells wider than tall


def _canvas(total_w, total_h, cell_w=0.39, cell_h=0.27):
    """A figure measured in matrix cells (y down), with a background axes for arrows, and a function
    placing axes."""
    fig = plt.figure(figsize=(total_w * cell_w, total_h * cell_h))
    bg = fig.add_axes((0, 0, 1, 1), xlim=(0, total_w), ylim=(total_h, 0))
    bg.axis("off")

    def axes(x, y, w, h):  # x, y: top-left corner
        return fig.add_axes((x / total_w, 1 - (y + h) / total_h, w / total_w, h / total_h))

    return fig, bg, axes


def _arrow(ax, start, end):
    arrow = {
        "arrowstyle": "-|>",
        "mutation_scale": 14,
        "lw": 1.5,
        "color": palette()["muted"],
        "shrinkA": 0,
    }
    ax.annotate("", end, start, arrowprops=arrow)


@figure("qkv-projections", SELF)
def qkv_projections(ns, lang):
    t = words(TEXT, lang)
    X = ns["X"]
    n, d_model = X.shape
    branches = [
        ("Q", "W^Q", ns["w_q"].weight.T),
        ("K", "W^K", ns["w_k"].weight.T),
        ("V", "W^V", ns["w_v"].weight.T),
    ]
    # X on top; below it one row per branch, W then its product, fed by one line from X down the
    # left edge
    bus, out_x, step = 0.35, 7.9, d_model + 1.7
    fig, bg, axes = _canvas(out_x + 6.6, 1.4 + n + 3 * step, cell_h=0.25)
    ax_x = axes(1, 1.4, d_model, n)
    _signed(ax_x, X, [t["token"].format(i) for i in range(n)])
    ax_x.yaxis.tick_right()
    ax_x.set_title(t["x_title"].format(n, d_model))
    tops = [1.4 + n + 1.7 + k * step for k in range(3)]
    bg.plot(
        [1, bus, bus],
        [1.4 + n / 2, 1.4 + n / 2, tops[-1] + d_model / 2],
        color=palette()["muted"],
        lw=1.5,
    )
    for (name, w_name, W), top in zip(branches, tops, strict=True):
        out, mid = ns[name], top + d_model / 2
        _arrow(bg, (bus, mid), (1, mid))
        ax_w = axes(1, top, W.shape[1], d_model)
        _signed(ax_w, W)
        ax_w.set_title(t["w_title"].format(w_name, *W.shape))
        _arrow(bg, (1.15 + W.shape[1], mid), (out_x - 0.1, mid))
        ax_o = axes(out_x, mid - n / 2, out.shape[1], n)
        _signed(ax_o, out, [f"${name.lower()}_{i}$" for i in range(n)])
        ax_o.yaxis.tick_right()
        ax_o.tick_params(labelsize=SUB)
        ax_o.set_title(t["out_title"].format(name, w_name, *out.shape))
    return fig


@figure("qkv-scores", SELF)
def qkv_scores(ns, lang):
    t = words(TEXT, lang)
    S, A = ns["S"].detach().cpu(), ns["A"].detach().cpu()
    queries, keys = [f"$q_{i}$" for i in range(len(S))], [f"$k_{j}$" for j in range(len(S))]
    fig, (ax_s, ax_a) = plt.subplots(1, 2, figsize=(5.8, 3.3))
    _signed(ax_s, S, queries, keys)
    ax_s.set_title(t["s_title"])
    heatmap(ax_a, A, queries, keys, fmt="{:.3f}", cmap="Oranges", vmin=0, vmax=1)
    ax_a.set_title(t["a_title"])
    ax_a.xaxis.tick_top()
    i, j = BOXED
    for r, c in [(i, j), (j, i)]:
        ax_s.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, lw=2.2, ec="black"))
    for ax in (ax_s, ax_a):
        ax.tick_params(labelsize=SUB)
        ax.set_aspect("equal")
    fig.text(0.5, 0.02, t["s_note"].format(i, j), ha="center")
    fig.tight_layout(rect=(0, 0.06, 1, 1), w_pad=1.5)
    return fig


@says("qkv-scores")
def qkv_scores_says(ns):
    S, A = ns["S"].detach().cpu(), ns["A"].detach().cpu()
    i, j = BOXED
    d_model = ns["d_model"]

    def spread(weights):  # each row's largest weight over its smallest
        return weights.max(dim=-1).values / weights.min(dim=-1).values

    even = bool((spread(A) < 2).all())
    # nn.Linear's initial weights: uniform within ±1/√d_model (its in_features)
    bound = 1 / d_model**0.5
    within = all(float(ns[w].weight.detach().abs().max()) <= bound for w in ("w_q", "w_k"))
    # W^Q and W^K both × √d_model: every score × d_model
    far = bool((spread(torch.softmax(S * d_model, dim=-1)) > 3).all())
    sqrt_d = "$\\sqrt{d_{\\text{model}}}$"
    return [
        Says("yet they hold different values", "数值却不同", holds=bool(S[i, j] != S[j, i])),
        Says(
            "On the right, the weights in each row are close to one another",
            "右边每一行的权重都差不多",
            holds=even,
        ),
        Says(
            f"within ±{bound:.3f} (one over {sqrt_d})",
            f"取在 ±{bound:.3f}（{sqrt_d} 分之一）之间",
            holds=within,
        ),
        Says(
            "which keeps the scores small, and small scores give nearly even weights",
            "分数因此很小，而分数小，权重就接近平均",
            holds=even and float(S.abs().max()) < 1,
        ),
        Says(
            f"Scaled up by {sqrt_d}, the same random matrices give weights far from even",
            f"把同样的随机矩阵放大 {sqrt_d} 倍，权重就远不平均了",
            holds=far,
        ),
    ]


@figure("cross-attention", CROSS)
def cross_attention(ns, lang):
    t = words(TEXT, lang)
    Q, K, V = (ns[k].detach().cpu() for k in "QKV")
    A, out = ns["A"].detach().cpu(), ns["out"].detach().cpu()
    (L_q, L_k), d_v = A.shape, V.shape[1]
    # A @ V = out laid out like a written multiplication: V above out, A left of out
    left, right, top, middle = 1.3, 1.3 + L_k + 0.5, 1.4, 2.0
    fig, bg, axes = _canvas(right + d_v + 0.2, top + L_k + middle + L_q + 2.3, cell_h=0.28)
    ax_v, ax_o = axes(right, top, d_v, L_k), axes(right, top + L_k + middle, d_v, L_q)
    ax_a = axes(left, top + L_k + middle, L_k, L_q)
    _signed(ax_v, V, range(L_k))
    ax_v.set_ylabel(t["enc"])
    ax_v.set_title(t["v_title"].format(*V.shape))
    heatmap(ax_a, A, range(L_q), range(L_k), cmap="Oranges", vmin=0)
    ax_a.set_aspect("auto")
    ax_a.set(xlabel=t["enc"], ylabel=t["dec"], title=t["ca_title"].format(L_q, L_k))
    _signed(ax_o, out)
    ax_o.set_title(t["o_title"].format(*out.shape))
    bg.text(
        0, top + 1, t["ca_sources"].format(*Q.shape, *K.shape, *V.shape), va="top", linespacing=1.8
    )
    return fig


@figure("qkv-roles", ROLES)
def qkv_roles(ns, lang):
    t = words(TEXT, lang)
    names = [t["words"][w] for w in ns["tokens"]]
    K, V = ns["K"].cpu(), ns["V"].cpu()
    q, scores, weights, z = (ns[k].cpu() for k in ("q_bites", "scores", "weights", "z_bites"))
    n = len(names)
    # in cells: the query above the keys; then keys, scores, weights, values side by side; the
    # output below the values
    k_x, s_x, w_x, v_x, top = 1.3, 4.2, 6.1, 8.5, 3.4
    fig, bg, axes = _canvas(v_x + 2.1, top + n + 3.0, cell_w=0.535, cell_h=0.36)
    blues = {"cmap": "Blues", "vmin": 0, "vmax": 4}
    ax_q = axes(k_x, 1.0, 2, 1)
    heatmap(ax_q, q[None, :], [""], t["q_cols"], fmt="{:.0f}", **blues)
    ax_q.set_title(t["q_title"], loc="left")
    ax_k = axes(k_x, top, 2, n)
    heatmap(ax_k, K, names, t["k_cols"], fmt="{:.0f}", **blues)
    ax_k.set_xlabel(t["k_title"])
    ax_s = axes(s_x, top, 1, n)
    heatmap(ax_s, scores[:, None], [""] * n, [t["score"]], fmt="{:.0f}", **blues)
    ax_w = axes(w_x, top, 1.4, n)
    orange = {"cmap": "Oranges", "vmin": 0, "vmax": 1}
    heatmap(ax_w, weights[:, None], [""] * n, [t["weight"]], fmt="{:.3f}", **orange)
    ax_v = axes(v_x, top, 2, n)
    heatmap(ax_v, V, [""] * n, t["v_cols"], fmt="{:.0f}", **blues)
    ax_v.set_xlabel(t["val_title"])
    ax_z = axes(v_x, top + n + 1.9, 2, 1)
    heatmap(ax_z, z[None, :], [""], ["", ""], fmt="{:.3f}", **orange)
    bg.text(v_x - 0.3, top + n + 2.4, t["z_title"], ha="right", va="center")
    for ax in (ax_q, ax_k, ax_s, ax_w, ax_v, ax_z):
        ax.xaxis.tick_top()
        ax.set_aspect("auto")
    mid = top + n / 2
    _arrow(bg, (k_x + 1, 2.05), (k_x + 1, top - 0.65))
    _arrow(bg, (k_x + 2.1, mid), (s_x - 0.1, mid))
    _arrow(bg, (s_x + 1.1, mid), (w_x - 0.1, mid))
    _arrow(bg, (w_x + 1.5, mid), (v_x - 0.1, mid))
    _arrow(bg, (v_x + 1, top + n + 0.75), (v_x + 1, top + n + 1.85))
    return fig
