"""Q18: the cost of self-attention against sequence length L: FLOPs and time."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

import math

# --8<-- [start:flops]
import torch
from torch.utils.flop_counter import FlopCounterMode

device = "cuda" if torch.cuda.is_available() else "cpu"


def self_attention(x, W_QKV, W_O):
    """One head of self-attention with its projections: (L, d) -> (L, d)."""
    q, k, v = (x @ W_QKV).chunk(3, dim=-1)  # (L, d) each
    scores = q @ k.T / q.shape[-1] ** 0.5  # (L, L): the quadratic part
    return torch.softmax(scores, dim=-1) @ v @ W_O


torch.manual_seed(0)
d = 64
W_QKV = torch.randn(d, 3 * d).to(device)
W_O = torch.randn(d, d).to(device)

lengths = [64, 128, 256, 512, 1024, 2048, 4096]
flops = []
for L in lengths:
    x = torch.randn(L, d).to(device)
    with FlopCounterMode(display=False) as counter:
        self_attention(x, W_QKV, W_O)
    flops.append(counter.get_total_flops())

print("    L         FLOPs  x when L doubles")
for i, L in enumerate(lengths):
    ratio = f"{flops[i] / flops[i - 1]:.2f}" if i else "-"
    print(f"{L:>5} {flops[i]:>13,}  {ratio}")
# --8<-- [end:flops]


# --8<-- [start:heads]
# a layer of H heads of width d_k = d_model / H: which d does the formula need?
d_model, H, L = 512, 8, 256
d_k = d_model // H
mha = torch.nn.MultiheadAttention(d_model, H, batch_first=True).to(device)
x = torch.randn(1, L, d_model).to(device)
with torch.no_grad(), FlopCounterMode(display=False) as counter:
    mha(x, x, x)
print(f"nn.MultiheadAttention({d_model}, {H}), L = {L}, d_k = {d_k}")
print(f"{'counted FLOPs:':<32}{counter.get_total_flops():>12,}")
for name, width in [("d_model", d_model), ("d_k", d_k)]:
    formula = 8 * L * width**2 + 4 * L**2 * width
    label = f"8·L·d² + 4·L²·d, d = {name}:"
    print(f"{label:<32}{formula:>12,}")

# FlopCounterMode has no formula for softmax or scaling: they count 0
scores = torch.randn(L, L).to(device)
with FlopCounterMode(display=False) as counter:
    torch.softmax(scores / d_k**0.5, dim=-1)
print("softmax and scaling of an (L, L) matrix:", counter.get_total_flops())
# --8<-- [end:heads]


def fitted_slope(xs, ys):
    """Least-squares slope of log(ys) against log(xs)."""
    lx, ly = [math.log(v) for v in xs], [math.log(v) for v in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    return num / sum((a - mx) ** 2 for a in lx)


# --8<-- [start:timing]
import time


def seconds(fn, *args, repeat=7):
    """Shortest of `repeat` timed runs of fn(*args), after one warm-up run."""
    fn(*args)
    best = float("inf")
    for _ in range(repeat):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn(*args)
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


threads = torch.get_num_threads()
torch.set_num_threads(1)  # one CPU thread: steadier timings on a busy machine
timed_lengths = [128, 256, 512, 1024, 2048]
repeats = 7
times = []
with torch.no_grad():
    for L in timed_lengths:
        x = torch.randn(L, d).to(device)
        times.append(seconds(self_attention, x, W_QKV, W_O, repeat=repeats))
torch.set_num_threads(threads)
# --8<-- [end:timing]
