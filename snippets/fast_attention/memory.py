"""Peak memory: the naive formula, blocked attention, PyTorch's kernel."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)
import torch
import torch.nn.functional as F

from snippets.fast_attention.blocked_attention import blocked_attention

device = "cuda" if torch.cuda.is_available() else "cpu"

# --8<-- [start:peak]
from torch.profiler import ProfilerActivity, profile


def naive_attention(q, k, v):
    """softmax(q kᵀ / √d_k) v, keeping the full (..., L, L) score matrix."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v


def peak_bytes(fn, *args):
    """Peak bytes allocated while fn(*args) runs, above those held before."""
    with torch.no_grad():
        if device == "cuda":
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            fn(*args)
            torch.cuda.synchronize()
            return torch.cuda.max_memory_allocated() - before
        # CPU: replay the profiler's allocations and frees in time order
        with profile(
            activities=[ProfilerActivity.CPU], profile_memory=True
        ) as p:
            fn(*args)
        changes = []
        for event in p.events():
            delta = event.self_cpu_memory_usage  # > 0 allocated, < 0 freed
            if delta > 0:  # count allocations at the op's start ...
                changes.append((event.time_range.start, delta))
            elif delta < 0:  # ... and frees at its end
                changes.append((event.time_range.end, delta))
        current = peak = 0
        for _, delta in sorted(changes):
            current += delta
            peak = max(peak, current)
        return peak


torch.manual_seed(0)
H, d_k, block = 4, 64, 128  # one sequence, 4 heads, tiles of 128 x 128
lengths = [256, 512, 1024, 2048]
peak = {"naive": [], "blocked": [], "sdpa": []}
for L in lengths:
    q, k, v = torch.randn(3, 1, H, L, d_k).to(device)
    blocked = lambda q, k, v: blocked_attention(q, k, v, block, block)  # noqa: E731
    peak["naive"].append(peak_bytes(naive_attention, q, k, v))
    peak["blocked"].append(peak_bytes(blocked, q, k, v))
    peak["sdpa"].append(peak_bytes(F.scaled_dot_product_attention, q, k, v))

# what the formula predicts: one score matrix against one tile of scores
MiB, KiB = 2**20, 2**10
for L in lengths:
    matrix = H * L * L * 4  # bytes of the float32 scores, H x L x L
    tile = H * block * block * 4  # bytes of one tile, H x block x block
    print(
        f"L={L:>4}: scores {matrix / MiB:>2g} MiB, one tile {tile / KiB:g} KiB"
    )
# --8<-- [end:peak]
