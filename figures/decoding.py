"""Chapter 8 figures, drawn from snippets/decoding/*.py."""

import matplotlib.pyplot as plt
import torch

from qkvsite.figures import Says, figure, note_measured_on, palette, says, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "upper_title": ("is_causal=True：对齐左上角（错）", "is_causal=True: aligned top left (wrong)"),
    "lower_title": (
        "causal_lower_right / tril($L_k - L_q$)：对齐右下角（对）",
        "causal_lower_right / tril($L_k - L_q$): aligned bottom right (correct)",
    ),
    "key": ("键（{} 个缓存的词元 + {} 个新词元）", "keys ({} cached tokens + {} new ones)"),
    "query": ("新词元的查询", "new queries"),
    "cached": ("缓存", "cached"),
    "new": ("新", "new"),
    "token": ("词元 {}", "token {}"),
    "speed_title": ("生成一个词元的时间（{} 次取最短）", "Time to generate one token (best of {})"),
    "length": ("这一步看到的词元数 Lₖ", "tokens this step sees, Lₖ"),
    "ms": ("毫秒 / 词元", "ms per token"),
    "full": ("不用缓存：整段重算（用缓存的 n 倍）", "no cache: recompute all (n× the cached)"),
    "with_cache": ("KV 缓存：只算新词元", "KV cache: the new token only"),
    "one_thread": ("CPU 单线程", "CPU, one thread"),
    "pad_title": ("第 {} 个序列：{}", "sequence {}: {}"),
    "pad_key": ("键：词元（位置编号）", "keys: token (position id)"),
    "pad_query": ("查询", "queries"),
    "pad": "<pad>",
    "reuse_title": (
        "缓存里的 {}（第 0 层、第 0 个头）：先“cat dog”，再追加“sat”",
        '{} in the cache (layer 0, head 0): "cat dog", then "sat"',
    ),
    "kept": ("缓存里原样留用", "kept from the cache"),
    "new_row": ("这一步新算的", "computed this step"),
    "dim": ("{} 的第几维", "dimension of {}"),
}

ALLOWED = "#4c9f70"


def mark(ok: bool) -> str:
    """What a mask cell shows: 1 where the query may attend, 0 where it may not."""
    return str(int(ok))


def _mask(ax, mask, row_labels, col_labels):
    """Green cells may attend, hatched grey cells may not."""
    paper, rule = palette()["paper"], palette()["rule"]
    for i, row in enumerate(mask):
        for j, ok in enumerate(row):
            style = (
                {"facecolor": ALLOWED, "edgecolor": paper}
                if ok
                else {"fill": False, "ec": rule, "hatch": "///"}
            )
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, lw=1.5, **style))
            ax.text(
                j,
                i,
                mark(ok),
                ha="center",
                va="center",
                color="white" if ok else palette()["muted"],
            )
    ax.set(xlim=(-0.5, len(mask[0]) - 0.5), ylim=(len(mask) - 0.5, -0.5), aspect="equal")
    ax.set_xticks(range(len(col_labels)), col_labels)
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.tick_params(length=0)
    ax.spines[:].set_visible(False)


@figure("decoding-causal-alignment", "decoding/causal_alignment.py")
def causal_alignment(ns, lang):
    t = words(TEXT, lang)
    L_k, L_q = ns["L_k"], ns["L_q"]
    cached = L_k - L_q
    # the first column of each group names the group: a word under every column would run into the
    # next
    cols = [
        f"{j}\n{t['cached'] if j == 0 else t['new'] if j == cached else ''}" for j in range(L_k)
    ]
    rows = [t["token"].format(cached + i) for i in range(L_q)]
    fig, axes = plt.subplots(2, 1, figsize=(5.0, 5.0), layout="constrained")
    for ax, key, title in zip(
        axes, ["upper_left", "lower_right"], ["upper_title", "lower_title"], strict=True
    ):
        _mask(ax, ns[key].tolist(), rows, cols)
        ax.axvline(cached - 0.5, color=palette()["ink"], lw=1.2, ls="--")
        ax.set(title=t[title], ylabel=t["query"])
    axes[-1].set_xlabel(t["key"].format(cached, L_q))
    return fig


@says("decoding-causal-alignment")
def causal_alignment_says(ns):
    rows, cols = ns["lower_right"].shape
    may = mark(True)
    return [
        Says(f"{rows} × {cols} masks", f"{rows} × {cols} 的掩码"),
        Says(f"{ns['L_q']} queries and {ns['L_k']} keys", f"{ns['L_q']} 个查询、{ns['L_k']} 个键"),
        Says(f"{may} means may attend", f"{may} 表示可以关注"),
    ]


TINY = "decoding/tiny_decoder.py"
KEPT = "#3b6fb0"


HEAD = 0  # the head drawn; the snippet keeps layer 0's cache (grown.k[0])


@figure("decoding-kv-cache-reuse", TINY)
def kv_cache_reuse(ns, lang):
    """Layer 0, head HEAD: the K and V rows of "cat dog" stay, the row of "sat" is new."""
    t = words(TEXT, lang)
    fig, axes = plt.subplots(2, 1, figsize=(5.8, 3.9), layout="constrained")
    for ax, name, before, after in zip(
        axes, "KV", (ns["prompt_k"], ns["prompt_v"]), (ns["grown_k"], ns["grown_v"]), strict=True
    ):
        rows = before[0, HEAD].cpu().tolist() + after[0, HEAD, -1:].cpu().tolist()
        for i, row in enumerate(rows):
            colour = KEPT if i < len(rows) - 1 else ALLOWED
            for j, value in enumerate(row):
                ax.add_patch(
                    plt.Rectangle(
                        (j - 0.5, i - 0.5),
                        1,
                        1,
                        facecolor=colour,
                        edgecolor=palette()["paper"],
                        lw=1.5,
                    )
                )
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", color="white", fontsize=11)
        d_k = len(rows[0])
        ax.set(xlim=(-0.5, d_k - 0.5), ylim=(len(rows) - 0.5, -0.5))
        ax.set_yticks(range(len(rows)), ["cat", "dog", "sat"])
        ax.set_xticks(range(d_k), range(d_k))
        ax.set_xlabel(t["dim"].format(name), fontsize=9)
        ax.tick_params(length=0)
        ax.spines[:].set_visible(False)
        ax.set_title(t["reuse_title"].format(name), fontsize=10)
        for y, label, colour in [(0.5, t["kept"], KEPT), (2, t["new_row"], ALLOWED)]:
            ax.annotate(
                label,
                (d_k - 0.5, y),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                color=colour,
                annotation_clip=False,
            )
    return fig


@says("decoding-kv-cache-reuse")
def kv_cache_reuse_says(ns):
    layer = next(i for i, k in enumerate(ns["grown"].k) if k is ns["grown_k"])
    return [
        Says(f"layer {layer}, head {HEAD}", f"第 {layer} 层、第 {HEAD} 个头"),
    ]


@figure("decoding-kv-cache-speed", TINY, measured=True)
def kv_cache_speed(ns, lang):
    t = words(TEXT, lang)
    lengths, per_token = ns["lengths"], ns["per_token"]
    fig, ax = plt.subplots(figsize=(5.8, 4.2), layout="constrained")
    full, cached = ([s * 1e3 for s in per_token[k]] for k in ("full", "cached"))
    ax.plot(lengths, full, "o-", color="tab:red", label=t["full"])
    ax.plot(lengths, cached, "s-", color="tab:blue", label=t["with_cache"])
    ratios = [f / c for f, c in zip(full, cached, strict=True)]
    for x, y, ratio in zip(lengths, full, ratios, strict=True):  # the ratio above each point
        ax.annotate(
            f"{ratio:.1f}×",
            (x, y),
            xytext=(0, 6),
            textcoords="offset points",
            ha="center",
            color="tab:red",
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, lengths)
    ax.set(xlabel=t["length"], ylabel=t["ms"], title=t["speed_title"].format(ns["repeats"]))
    ax.set_ylim(0, max(full) * 1.15)
    ax.legend(loc="upper left")
    ax.grid(True, alpha=0.3)
    note_measured_on(fig, ns, lang, "CUDA" if ns["device"] == "cuda" else t["one_thread"])
    fig.get_layout_engine().set(rect=(0, 0.05, 1, 1))
    return fig


@figure("decoding-left-padding", TINY)
def left_padding(ns, lang):
    t = words(TEXT, lang)
    batch, pad, positions = ns["batch"].cpu(), ns["pad"].cpu(), ns["positions"].cpu()
    vocab, prompts = ns["vocab"], ns["prompts"]
    mask = ns["decoder_mask"](batch.shape[1], batch.shape[1], pad)[:, 0]
    fig, axes = plt.subplots(
        1, len(prompts), figsize=(5.8, 3.2), layout="constrained", gridspec_kw={"wspace": 0.1}
    )
    for b, ax in enumerate(axes):
        names = [
            t["pad"] if bool(pad[b, j]) else vocab[int(batch[b, j])] for j in range(batch.shape[1])
        ]
        cols = [
            name if bool(pad[b, j]) else f"{name}\n({int(positions[b, j])})"
            for j, name in enumerate(names)
        ]
        _mask(ax, mask[b].tolist(), names, cols)
        ax.set_title(t["pad_title"].format(b, " ".join(prompts[b])))
    axes[0].set_ylabel(t["pad_query"])
    fig.supxlabel(t["pad_key"])
    return fig


@says("decoding-left-padding")
def left_padding_says(ns):
    P = ns["batch"].shape[1]
    mask = ns["decoder_mask"](P, P, ns["pad"])[:, 0].cpu()
    causal = torch.ones(P, P, dtype=torch.bool).tril()
    return [
        Says(f"{P} × {P} masks", f"{P} × {P} 的掩码"),
        Says(f"{mark(True)} means may attend", f"{mark(True)} 表示可以关注"),
        Says(
            "an ordinary causal lower triangle",
            "普通的因果下三角",
            holds=bool((mask[0] == causal).all()),
        ),
    ]
