"""Chapter 9 figures, drawn from snippets/fast_attention/*.py."""

import math

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from qkvsite.figures import Says, figure, note_measured_on, palette, says, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "mem_title": (
        "一次注意力的峰值内存（$H$ = {}，$d_k$ = {}）",
        "Peak memory of one call ($H$ = {}, $d_k$ = {})",
    ),
    "naive": ("朴素公式", "naive formula"),
    "blocked": ("分块注意力（{}×{} 的块）", "blocked ({}×{} tiles)"),
    "sdpa": "F.scaled_dot_product_attention",
    "one_matrix": ("所有头的分数（公式）", "the scores of all heads (formula)"),
    "length": ("序列长度 $L$", "sequence length $L$"),
    "cpu_method": ("CPU 单线程，回放分析器记录", "CPU, one thread, profiler replayed"),
    "cuda_method": "torch.cuda.max_memory_allocated",
    "tiles_title": ("{}×{} 的分数，{}×{} 的块", "{}×{} scores in {}×{} tiles"),
    "skipped": ("整块跳过", "skipped"),
    "partial": ("块内遮挡", "masked inside"),
    "full": ("无需掩码", "no mask needed"),
    "key": ("键的位置 $j$", "key position $j$"),
    "query": ("查询的位置 $i$", "query position $i$"),
    # the FlashAttention picture
    "hbm": ("HBM（显存）：大，慢", "HBM (GPU memory): large, slow"),
    "sram": ("SRAM（片上）：小，快", "SRAM (on chip): small, fast"),
    "q_tile": ("Q 块", "Q tile"),
    "kv_tile": "K{0} V{0}",
    "scores_tile": ("分数块", "score tile"),
    "read": ("读一次", "read once"),
    "write": ("写一次", "written once"),
    "acc": "acc",
    "out": "O = acc / ℓ",
    "flash_title": (
        "{} 个键分成 {} 块，每块 {} 个；下面的数是查询 {} 的",
        "{} keys in {} tiles of {}; the numbers of query {}",
    ),
    # MLA
    "x": ("输入 x", "input x"),
    "c": ("潜在向量 c", "latent c"),
    "k_r": ("RoPE 键", "RoPE key"),
    "K": ("K\n（{} 个头）", "K\n({} heads)"),
    "V": ("V\n（{} 个头）", "V\n({} heads)"),
    "compress": ("压缩", "compress"),
    "cache": ("缓存：{} + {} = {} 个数", "cache: {} + {} = {} numbers"),
    "not_cached": ("不缓存", "not cached"),
    "expand": ("展开", "expand"),
    # GQA
    "query_heads": ("查询头", "query heads"),
    "kv_heads": ("K/V 头", "K/V heads"),
    "mha": ("MHA，G = {}", "MHA, G = {}"),
    "gqa": ("GQA，G = {}", "GQA, G = {}"),
    "mqa": ("MQA，G = {}", "MQA, G = {}"),
}

COLOURS = {"skipped": None, "partial": "#f2b84b", "full": "#4c9f70"}
TILE = 16  # the tiles of the chapter's out = blocked_attention(q, k, v, 16, 16)
QUERY = 0  # the query row whose running state the FlashAttention picture shows


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


def end_slope(xs, ys):
    """The log-log slope from the first point to the last: the exponent p of y ∝ x^p."""
    return math.log(ys[-1] / ys[0]) / math.log(xs[-1] / xs[0])


@says("fast-attention-memory")
def memory_says(ns):
    """Peak memory is re-measured at each run: the first and last lengths, with wide margins."""
    lengths, peak, block = ns["lengths"], ns["peak"], ns["block"]
    scores = ns["H"] * lengths[-1] ** 2 * 4  # bytes of the float32 scores of all heads, longest L
    return [
        Says(f"{block} × {block} tiles", f"{block} × {block} 分块"),
        Says(
            "the naive formula grows like the square of L",
            "朴素公式按 L 的平方增长",
            holds=abs(end_slope(lengths, peak["naive"]) - 2) < 0.25,
        ),
        Says(
            f"at L = {lengths[-1]}, blocked attention and SDPA are far below"
            " the scores of all heads",
            f"L = {lengths[-1]} 时，分块注意力和 SDPA 远低于所有头的分数",
            holds=max(peak["blocked"][-1], peak["sdpa"][-1]) < scores / 4,
        ),
        Says(f"the scores of all {ns['H']} heads", f"{ns['H']} 个头全部分数"),
    ]


@figure("fast-attention-tiles", "fast_attention/blocked_attention.py")
def tiles(ns, lang):
    t = words(TEXT, lang)
    L, block = ns["L"], TILE

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


@says("fast-attention-tiles")
def tiles_says(ns):
    L = ns["L"]
    return [
        Says(
            f"A {L} × {L} grid of scores cut into {TILE} × {TILE} tiles",
            f"{L} × {L} 的分数切成 {TILE} × {TILE} 的块",
        ),
    ]


def box(ax, x, y, w, h, text, colour=None, **text_style):
    """A rounded box with its text centred."""
    ax.add_patch(
        FancyBboxPatch(
            (x, y),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=1",
            fc=colour or palette()["paper"],
            ec=palette()["ink"],
            lw=1,
        )
    )
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", **text_style)


def arrow(ax, start, end, colour=None, **style):
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=10,
            color=colour or palette()["ink"],
            lw=1.2,
            shrinkA=0,
            shrinkB=0,
            **style,
        )
    )


def running_state(q, k, v, block):
    """Query QUERY's running max m, sum ℓ and weighted sum acc after each tile of keys: the updates
    of blocked_attention, one query row."""
    query = q[0, 0, QUERY] / q.shape[-1] ** 0.5
    m, total, acc = torch.tensor(float("-inf")), torch.tensor(0.0), torch.zeros(v.shape[-1])
    states = []
    for j0 in range(0, k.shape[-2], block):
        scores = k[0, 0, j0 : j0 + block] @ query
        m_new = torch.maximum(m, scores.max())
        scale = torch.exp(m - m_new)
        p = torch.exp(scores - m_new)
        total = total * scale + p.sum()
        acc = acc * scale + p @ v[0, 0, j0 : j0 + block]
        m = m_new
        states.append((m.item(), total.item(), acc.clone(), scale.item()))
    return states


@figure("fast-attention-flash", "fast_attention/blocked_attention.py")
def flash(ns, lang):
    """One tile of queries as FlashAttention-2 runs it: each K, V tile comes from HBM into SRAM
    once, the running (m, ℓ, acc) stays on chip, the output goes back once."""
    t = words(TEXT, lang)
    q, k, v = (ns[name].float().cpu() for name in ("q", "k", "v"))
    block = TILE
    states = running_state(q, k, v, block)
    n = len(states)
    fig, ax = plt.subplots(figsize=(5.8, 4.2))
    fig.subplots_adjust(left=0, right=1, bottom=0, top=0.92)
    ax.set(xlim=(0, 100), ylim=(-6, 64))
    ax.set_axis_off()
    ink, muted = palette()["ink"], palette()["muted"]
    # the two memories
    ax.add_patch(plt.Rectangle((0, 42), 100, 22, fc="tab:blue", alpha=0.13, lw=0))
    ax.add_patch(plt.Rectangle((0, -6), 100, 42, fc="tab:orange", alpha=0.16, lw=0))
    ax.text(1, 62, t["hbm"], va="top", color=ink)
    ax.text(1, -4.5, t["sram"], va="bottom", color=ink)
    width = 70 / n  # the tiles' columns, between Q and O
    centres = [15 + width * (j + 0.5) for j in range(n)]
    box(ax, 1, 45, 11, 8, "Q")
    box(ax, 88, 45, 11, 8, "O")
    box(ax, 1, 20, 11, 7, t["q_tile"])
    arrow(ax, (6.5, 45), (6.5, 27))
    ax.text(7.5, 38, t["read"], color=ink)
    for row, label in [(15, "m"), (10, "ℓ"), (4.5, t["acc"])]:
        ax.text(11, row, label, ha="right", va="center", color=ink)
    scale = max(float(state[2].abs().max()) for state in states)
    for j, (x, (m, total, acc, factor)) in enumerate(zip(centres, states, strict=True)):
        sub = "₁₂₃₄₅₆₇₈₉"[j]
        box(ax, x - 7.5, 45, 15, 8, t["kv_tile"].format(sub))
        box(ax, x - 7.5, 20, 15, 7, t["scores_tile"])
        arrow(ax, (x, 45), (x, 27), colour="tab:blue")
        ax.text(x, 15, f"{m:.2f}", ha="center", va="center")
        ax.text(x, 10, f"{total:.2f}", ha="center", va="center")
        ax.imshow(
            acc[None].numpy(),
            extent=(x - 7, x + 7, 2.5, 6.5),
            cmap="RdBu_r",
            vmin=-scale,
            vmax=scale,
            aspect="auto",
            zorder=2,
        )
        ax.add_patch(plt.Rectangle((x - 7, 2.5), 14, 4, fill=False, ec=muted, lw=0.6, zorder=3))
        if j > 0:  # the factor exp(m_old - m_new) that rescaled ℓ and acc at this tile
            ax.text(
                x - width / 2,
                12.5,
                f"×{factor:.2f}",
                ha="center",
                va="center",
                color="tab:red",
            )
    ax.text(centres[0] + 1, 38, t["read"], color="tab:blue")
    arrow(ax, (centres[-1] + 7.5, 4.5), (93.5, 4.5), colour="tab:green")
    arrow(ax, (93.5, 4.5), (93.5, 45), colour="tab:green")
    ax.text(92.5, 24, t["write"], color="tab:green", rotation=90, va="center", ha="right")
    ax.text(95, 10, "÷ ℓ", color="tab:green", va="center")
    ax.set_title(t["flash_title"].format(k.shape[-2], n, block, QUERY), fontsize=11)
    return fig


@says("fast-attention-flash")
def flash_says(ns):
    return [Says(f"query {QUERY}'s", f"查询 {QUERY} 的")]


@figure("fast-attention-mla", "fast_attention/mla.py")
def mla(ns, lang):
    """MLA: compress each token to a latent c, cache c (and the small RoPE key), expand c into every
    head's K and V; heights are the widths of the code's vectors."""
    t = words(TEXT, lang)
    d_model, d_c, d_r, H, d_k = (ns[name] for name in ("d_model", "d_c", "d_r", "H", "d_k"))
    fig, ax = plt.subplots(figsize=(5.8, 3.4))
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1)
    ax.set(xlim=(0, 100), ylim=(-16, 50))
    ax.set_axis_off()
    ink, muted = palette()["ink"], palette()["muted"]
    unit = 40 / max(d_model, H * d_k)  # height per number
    bottom = 2

    def bar(x, size, colour, label, heads=1):
        height = size * unit
        ax.add_patch(plt.Rectangle((x, bottom), 5, height, fc=colour, ec=ink, lw=0.8))
        for h in range(1, heads):  # one band per head
            ax.plot([x, x + 5], [bottom + h * height / heads] * 2, color=ink, lw=0.5)
        ax.text(x + 2.5, bottom - 1.5, label, ha="center", va="top")
        ax.text(x + 2.5, bottom + height + 1, size, ha="center", va="bottom", color=muted)
        return bottom + height / 2

    mid_x = bar(5, d_model, "tab:grey", t["x"])
    mid_c = bar(38, d_c, "tab:purple", t["c"])
    bar(52, d_r, "tab:orange", t["k_r"])
    mid_k = bar(76, H * d_k, "tab:blue", t["K"].format(H), heads=H)
    mid_v = bar(91, H * d_k, "tab:green", t["V"].format(H), heads=H)
    ax.text(86, -10, t["not_cached"], ha="center", va="top", color=muted)
    # the cache: c and the RoPE key, dashed around them
    ax.add_patch(plt.Rectangle((32, -7), 32, 18, fill=False, ec="tab:red", lw=1.2, ls="--"))
    ax.text(
        48,
        -9,
        t["cache"].format(d_c, d_r, d_c + d_r),
        ha="center",
        va="top",
        color="tab:red",
        fontsize=11,
    )
    arrow(ax, (10.5, mid_x), (37.5, mid_c))
    ax.text(21, 20, f"{t['compress']}\nw_dkv", ha="center", va="bottom")
    arrow(ax, (43.5, mid_c), (75.5, mid_k))
    arrow(ax, (43.5, mid_c), (90.5, mid_v))
    ax.text(60, 26, f"{t['expand']}\nw_uk, w_uv", ha="center", va="bottom")
    return fig


@figure("fast-attention-gqa", "fast_attention/kv_cache.py")
def gqa(ns, lang):
    """Which K/V head each query head reads, for every G of the code: repeat_interleave's copies."""
    t = words(TEXT, lang)
    H, groups = ns["H"], ns["groups"]
    fig, axes = plt.subplots(len(groups), 1, figsize=(5.8, 1.3 * len(groups)))
    colours = plt.get_cmap("tab10")
    ink, muted = palette()["ink"], palette()["muted"]
    for ax, G in zip(axes, groups, strict=True):
        # query head h reads K/V head kv_of[h]: the copies repeat_interleave(H // G) makes
        kv_of = torch.arange(G).repeat_interleave(H // G).tolist()
        ax.set(xlim=(-2.6, H), ylim=(-0.1, 3))
        ax.set_axis_off()
        kind = "mha" if G == H else "mqa" if G == 1 else "gqa"
        ax.text(-2.6, 2.95, t[kind].format(G), va="top", fontsize=11, fontweight="bold")
        for h, g in enumerate(kv_of):
            ax.add_patch(
                plt.Rectangle((h + 0.1, 1.6), 0.8, 0.6, fc=colours(g), alpha=0.3, ec=ink, lw=0.8)
            )
            ax.text(h + 0.5, 1.9, f"q{h}", ha="center", va="center")
        for g in range(G):  # each K/V head under the middle of the query heads that read it
            centre = (H // G) * (g + 0.5)
            ax.add_patch(
                plt.Rectangle((centre - 0.4, 0), 0.8, 0.6, fc=colours(g), alpha=0.8, ec=ink, lw=0.8)
            )
            ax.text(centre, 0.3, f"kv{g}", ha="center", va="center")
        for h, g in enumerate(kv_of):
            ax.plot([h + 0.5, (H // G) * (g + 0.5)], [1.6, 0.6], color=muted, lw=0.8)
        ax.text(-0.2, 1.9, t["query_heads"], ha="right", va="center")
        ax.text(-0.2, 0.3, t["kv_heads"], ha="right", va="center")
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1, hspace=0.1)
    return fig
