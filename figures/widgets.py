"""The figures a reader can move (``qkvsite.widgets``): every state each can show, computed from
the tested examples. Drawn in the page by docs/javascripts/widgets.js."""

from qkvsite.config import words
from qkvsite.widgets import widget

ONE_ROW = "scaled_dot_product/one_row.py"
ROLES = "qkv/verb_subject.py"
ALIGNMENT = "decoding/causal_alignment.py"

# each label in the two languages, (Chinese, English), or one string for both
TEXT = {
    "temperature": {
        "title": (
            "拖动滑块：dₖ 变大时，同一行分数的 softmax",
            "Move the slider: softmax of one row of scores as dₖ grows",
        ),
        "slider": "dₖ",
        "key": ("键 {}", "key {}"),
        "raw": ("不缩放：softmax(q·k)", "unscaled: softmax(q·k)"),
        "scaled": ("缩放：softmax(q·k / √dₖ)", "scaled: softmax(q·k / √dₖ)"),
        "max": ("最大权重 {}", "largest weight {}"),
        "summary": (
            "dₖ = {d_k}：不缩放的最大权重 {raw}，缩放后 {scaled}",
            "dₖ = {d_k}: largest weight {raw} unscaled, {scaled} scaled",
        ),
    },
    "roles": {
        "title": (
            "选一个词元，看它的注意力权重落在哪些词元上",
            "Pick a token to see where its attention weights go",
        ),
        "pick": ("查询的词元", "The querying token"),
        "words": {
            "dog": ("dog（狗）", "dog"),
            "bites": ("bites（咬）", "bites"),
            "man": ("man（人）", "man"),
        },
        "weight": ("权重", "weight"),
        "summary": ("{token} 的权重：{weights}", "weights of {token}: {weights}"),
    },
    "alignment": {
        "title": (
            "切换掩码的对齐方式：每个新词元能看到哪些键",
            "Switch the mask's alignment: which keys each new token sees",
        ),
        "pick": ("掩码", "Mask"),
        "upper_left": ("is_causal=True（左上对齐）", "is_causal=True (top left)"),
        "lower_right": ("causal_lower_right（右下对齐）", "causal_lower_right (bottom right)"),
        "query": ("查询 {}", "query {}"),
        "key": ("键 {}", "key {}"),
        "keys": ("键", "keys"),
        "legend": (
            "虚线左边是缓存里的键，右边是这一步新词元的键；1 表示可以关注。",
            "Left of the dashed line: the cached keys; right of it: the new tokens' keys. "
            "1 means may attend.",
        ),
        "summary": (
            "查询 {query} 能看到 {keys} 个键里的 {n} 个",
            "query {query} sees {n} of {keys} keys",
        ),
        "sep": ("；", "; "),
        "seen": ("能看到", "may attend"),
        "hidden": ("看不到", "masked"),
    },
}


def numbers(t) -> list[float]:
    """A tensor's numbers, unrounded: the page rounds them as Python's f"{x:.3f}" does."""
    return t.cpu().tolist()


@widget("sdpa-temperature", ONE_ROW)
def temperature(ns, lang):
    """Every slider position: the weights of one row of scores without and with 1/√d_k."""
    return {
        "kind": "temperature",
        "text": words(TEXT["temperature"], lang),
        "keys": ns["n_keys"],
        "states": [
            {"d_k": d_k, "raw": numbers(ns["raw"][d_k]), "scaled": numbers(ns["scaled"][d_k])}
            for d_k in ns["d_ks"]
        ],
    }


@widget("qkv-who-looks", ROLES)
def who_looks(ns, lang):
    """Every token: its row of softmax(Q Kᵀ), the weights the chapter's matrix form computes."""
    import torch

    text = words(TEXT["roles"], lang)
    weights = torch.softmax(ns["S"], dim=-1)  # (3, 3): the chapter's Z = softmax(S) @ V
    return {
        "kind": "roles",
        "text": text,
        "tokens": [text["words"][t] for t in ns["tokens"]],
        "states": [{"token": i, "weights": numbers(row)} for i, row in enumerate(weights)],
    }


@widget("decoding-alignment", ALIGNMENT)
def alignment(ns, lang):
    """Both alignments of the L_q × L_k causal mask: which keys each new token may see."""
    L_q, L_k = ns["L_q"], ns["L_k"]
    return {
        "kind": "alignment",
        "text": words(TEXT["alignment"], lang),
        "queries": list(range(L_k - L_q, L_k)),  # the new tokens' positions
        "keys": L_k,
        "cached": L_k - L_q,
        "states": [
            {"mask": name, "seen": ns[name].int().tolist()}
            for name in ("upper_left", "lower_right")
        ],
    }
