"""Chapter 7 figures, drawn from snippets/decoding/*.py."""

import matplotlib.pyplot as plt

from qkvsite.figures import figure, note_measured_on, palette, words

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "upper_title": ("is_causal=True：对齐左上角（错）", "is_causal=True: aligned top left (wrong)"),
    "lower_title": (
        "causal_lower_right / tril($L_k - L_q$)：对齐右下角（对）",
        "causal_lower_right / tril($L_k - L_q$): aligned bottom right (right)",
    ),
    "key": ("键（{} 个缓存的词元 + {} 个新词元）", "keys ({} cached tokens + {} new ones)"),
    "query": ("新词元的查询", "queries of the new tokens"),
    "cached": ("缓存", "cached"),
    "new": ("新", "new"),
    "token": ("词元 {}", "token {}"),
    "speed_title": ("生成一个词元的时间（{} 次取最短）", "Time to generate one token (best of {})"),
    "ratio_title": ("不用缓存 / 用缓存", "without cache / with cache"),
    "length": ("这一步看到的词元数 $L_k$", "tokens this step sees, $L_k$"),
    "ms": ("毫秒 / 词元", "ms per token"),
    "full": ("不用缓存：整段重算", "no cache: recompute everything"),
    "with_cache": ("KV 缓存：只算新词元", "KV cache: the new token only"),
    "times": "{:.1f}×",
    "one_thread": ("CPU 单线程", "CPU, one thread"),
    "pad_title": ("第 {} 个序列：{}", "sequence {}: {}"),
    "pad_key": ("键：词元（位置编号）", "keys: token (position id)"),
    "pad_query": ("查询", "queries"),
    "pad": "<pad>",
}

ALLOWED = "#4c9f70"


def _mask(ax, mask, row_labels, col_labels):
    """Green cells may attend, hatched grey cells may not."""
    rows, cols = len(mask), len(mask[0])
    for i in range(rows):
        for j in range(cols):
            ok = bool(mask[i][j])
            ax.add_patch(
                plt.Rectangle(
                    (j - 0.5, i - 0.5),
                    1,
                    1,
                    facecolor=ALLOWED if ok else palette()["paper"],
                    edgecolor=palette()["paper"] if ok else palette()["rule"],  # a blocked cell's hatch
                    hatch=None if ok else "///",
                    lw=1.5,
                )
            )
            ax.text(j, i, "1" if ok else "0", ha="center", va="center", color="white" if ok else palette()["muted"])
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xticks(range(cols), col_labels)
    ax.set_yticks(range(rows), row_labels)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)


@figure("decoding-causal-alignment", "decoding/causal_alignment.py")
def causal_alignment(ns, lang):
    t = words(TEXT, lang)
    L_k, L_q = ns["L_k"], ns["L_q"]
    cached = L_k - L_q
    # the first column of each group names the group: a word under every column would run into the next
    cols = [t["cached"] if j == 0 else t["new"] if j == cached else "" for j in range(L_k)]
    cols = [f"{j}\n{c}" for j, c in enumerate(cols)]
    rows = [t["token"].format(cached + i) for i in range(L_q)]
    fig, axes = plt.subplots(2, 1, figsize=(7.6, 4.8))
    for ax, key, title in zip(axes, ["upper_left", "lower_right"], ["upper_title", "lower_title"], strict=True):
        _mask(ax, ns[key].tolist(), rows, cols)
        ax.axvline(cached - 0.5, color=palette()["ink"], lw=1.2, ls="--")
        ax.set_title(t[title], fontsize=10)
        ax.set_ylabel(t["query"], fontsize=9)
    axes[-1].set_xlabel(t["key"].format(cached, L_q), fontsize=9)
    fig.tight_layout()
    return fig


TINY = "decoding/tiny_decoder.py"


@figure("decoding-kv-cache-speed", TINY, measured=True)
def kv_cache_speed(ns, lang):
    t = words(TEXT, lang)
    lengths, per_token, speedup = ns["lengths"], ns["per_token"], ns["speedup"]
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(10.0, 4.2), width_ratios=[1.3, 1])
    ms = {k: [s * 1e3 for s in v] for k, v in per_token.items()}
    ax_t.plot(lengths, ms["full"], "o-", color="tab:red", label=t["full"])
    ax_t.plot(lengths, ms["cached"], "s-", color="tab:blue", label=t["with_cache"])
    ax_t.set_xscale("log", base=2)
    ax_t.set_ylim(bottom=0)
    ax_t.set_xticks(lengths, [str(length) for length in lengths])
    ax_t.set_xlabel(t["length"])
    ax_t.set_ylabel(t["ms"])
    ax_t.set_title(t["speed_title"].format(ns["repeats"]), fontsize=10)
    ax_t.legend(loc="upper left", fontsize=9)
    ax_t.grid(True, which="both", alpha=0.3)
    positions = range(len(lengths))
    ax_r.bar(positions, speedup, color="tab:purple")
    for x, value in zip(positions, speedup, strict=True):
        ax_r.text(x, value, t["times"].format(value), ha="center", va="bottom", fontsize=9)
    ax_r.axhline(1, color=palette()["muted"], lw=0.8, ls=":")
    ax_r.set_xticks(positions, [str(length) for length in lengths])
    ax_r.set_xlabel(t["length"])
    ax_r.set_ylim(0, max(speedup) * 1.18)
    ax_r.set_title(t["ratio_title"], fontsize=10)
    note_measured_on(fig, ns, lang, "CUDA" if ns["device"] == "cuda" else t["one_thread"], fontsize=9.5)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


@figure("decoding-left-padding", TINY)
def left_padding(ns, lang):
    t = words(TEXT, lang)
    batch, pad, positions = ns["batch"].cpu(), ns["pad"].cpu(), ns["positions"].cpu()
    vocab, prompts = ns["vocab"], ns["prompts"]
    mask = ns["decoder_mask"](batch.shape[1], batch.shape[1], pad)[:, 0]
    fig, axes = plt.subplots(1, len(prompts), figsize=(9.6, 3.9))
    for b, ax in enumerate(axes):
        names = [t["pad"] if bool(pad[b, j]) else vocab[int(batch[b, j])] for j in range(batch.shape[1])]
        cols = [name if bool(pad[b, j]) else f"{name} ({int(positions[b, j])})" for j, name in enumerate(names)]
        _mask(ax, mask[b].tolist(), names, cols)
        ax.set_title(t["pad_title"].format(b, " ".join(prompts[b])), fontsize=10)
        ax.set_xlabel(t["pad_key"], fontsize=9)
        ax.tick_params(axis="x", labelsize=9)
        if b == 0:
            ax.set_ylabel(t["pad_query"], fontsize=9)
    fig.tight_layout()
    return fig
