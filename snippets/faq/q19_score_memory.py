"""Q19: memory of the L x L score matrix, computed, and peak memory measured."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:score_bytes]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def score_matrix_bytes(L, dtype, batch=1, heads=1):
    """Bytes of the (batch, heads, L, L) score matrix in `dtype`."""
    element = torch.empty((), dtype=dtype, device=device).element_size()
    return batch * heads * L * L * element


def human(n_bytes):
    """1 MiB = 2**20 bytes, 1 GiB = 2**30 bytes."""
    if n_bytes >= 2**30:
        return f"{n_bytes / 2**30:g} GiB"
    return f"{n_bytes / 2**20:g} MiB"


for L in [4096, 32768]:
    for dtype in [torch.float32, torch.float16]:
        size = human(score_matrix_bytes(L, dtype))
        print(f"L={L:>5}  {str(dtype):<13}  one head, one sample: {size}")
B, H = 8, 16  # a batch of 8 sequences, 16 heads
size = human(score_matrix_bytes(4096, torch.float16, batch=B, heads=H))
print(f"L= 4096  torch.float16  batch {B} x {H} heads:   {size}")
# --8<-- [end:score_bytes]

# --8<-- [start:peak]
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

device = "cuda" if torch.cuda.is_available() else "cpu"


def naive_attention(q, k, v):
    """softmax(q kᵀ / √d_k) v, keeping the full (..., L_q, L_k) scores."""
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
        cpu = [ProfilerActivity.CPU]
        with profile(activities=cpu, profile_memory=True) as prof:
            fn(*args)
        changes = []
        for event in prof.events():
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
heads, d_k = 4, 64
lengths = [256, 512, 1024, 2048]
naive_peak, sdpa_peak, one_score_matrix = [], [], []
threads = torch.get_num_threads()
torch.set_num_threads(1)  # a CPU kernel's scratch memory grows with threads
for L in lengths:
    q, k, v = torch.randn(3, 1, heads, L, d_k).to(device)
    naive_peak.append(peak_bytes(naive_attention, q, k, v))
    sdpa_peak.append(peak_bytes(F.scaled_dot_product_attention, q, k, v))
    one_score_matrix.append(heads * L * L * q.element_size())
torch.set_num_threads(threads)
# --8<-- [end:peak]
