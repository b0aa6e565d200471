"""The shape table, read from a trace of chapter 4's MultiHeadAttention.

On the page this file's sections continue chapter 4's module (its 40-line core),
which the page shows folded right above them. Run alone, the file loads that
module from chapter 4's snippet file.
"""

import runpy
from pathlib import Path

import torch

CHAPTER_4 = Path(__file__).resolve().parents[1] / "multi_head"
_ch4 = runpy.run_path(str(CHAPTER_4 / "multi_head_attention.py"))
MultiHeadAttention = _ch4["MultiHeadAttention"]

# --8<-- [start:table]
device = "cuda" if torch.cuda.is_available() else "cpu"

B, L, d_model, H = 2, 5, 12, 3  # all different: read shapes back as letters
d_k = d_model // H
letters = {B: "B", L: "L", d_model: "d_model", H: "H", d_k: "d_k"}
assert len(letters) == 5, "pick five different sizes"

torch.manual_seed(0)
mha = MultiHeadAttention(d_model, H).to(device)
x = torch.randn(B, L, d_model).to(device)
trace = {}
mha(x, trace=trace)

steps = {
    "X": "input, never split",
    "Q": "X W^Q, all heads at once",
    "K": "X W^K",
    "V": "X W^V",
    "Q_h": "Q split into heads",
    "K_h": "K split into heads",
    "V_h": "V split into heads",
    "scores": "Q_h K_hᵀ / √d_k",
    "weights": "softmax(scores, dim=-1)",
    "heads": "weights V_h",
    "merged": "heads side by side",
    "output": "merged W^O",
}
for name, meaning in steps.items():
    shape = tuple(trace[name].shape)
    symbols = "(" + ", ".join(letters[size] for size in shape) + ")"
    print(f"{name:8} {symbols:16} {str(shape):13} {meaning}")
# --8<-- [end:table]

# --8<-- [start:one_head]
# a single head: H = 1, so d_k = d_model: its (L, L) scores use all features
single = {}
MultiHeadAttention(d_model, 1).to(device)(x, trace=single)
for name in ["Q_h", "scores", "heads"]:
    print(f"{name:8} {tuple(single[name].shape)}")
# --8<-- [end:one_head]
