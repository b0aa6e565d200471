"""Q8: dividing by d_k instead of √d_k flattens softmax towards uniform.

On the FAQ page this file's section continues chapter 3's why_scale.py (the
variance and saturation sections), which the page shows right above it. Run
alone, the file runs that script first and continues from its variables.
"""

import runpy
from pathlib import Path

import torch

CHAPTER_3 = Path(__file__).resolve().parents[1] / "scaled_dot_product"
_ch3 = runpy.run_path(str(CHAPTER_3 / "why_scale.py"))
device, g, d_ks = _ch3["device"], _ch3["g"], _ch3["d_ks"]
raw_var, scaled_var = _ch3["raw_var"], _ch3["scaled_var"]
rows, n_keys, max_weight = _ch3["rows"], _ch3["n_keys"], _ch3["max_weight"]

# --8<-- [start:over_d_k]
# dividing by d_k instead: new scores of the same kind, next to the two above
peak = {"none": max_weight["raw"], "sqrt": max_weight["scaled"], "d_k": []}
for d_k in d_ks:
    q = torch.randn(rows, 1, d_k, generator=g).to(device, torch.float64)
    k = torch.randn(rows, n_keys, d_k, generator=g).to(device, torch.float64)
    weights = torch.softmax((q * k).sum(dim=-1) / d_k, dim=-1)
    peak["d_k"].append(weights.max(dim=-1).values.mean().item())
print(f"largest weight in a row of {n_keys} (uniform: {1 / n_keys:.3f})")
print(" d_k  no scale     /√d_k      /d_k")
for i, d_k in enumerate(d_ks):
    print(f"{d_k:4d}" + "".join(f"{peak[key][i]:10.3f}" for key in peak))
# --8<-- [end:over_d_k]
