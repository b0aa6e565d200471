"""Peak memory: the naive formula, blocked attention, PyTorch's kernel."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)
import torch
import torch.nn.functional as F

from snippets.fast_attention.blocked_attention import blocked_attention

device = "cuda" if torch.cuda.is_available() else "cpu"

# --8<-- [start:peak_bytes]
from torch.profiler import ProfilerActivity, profile


def peak_bytes(fn, *args):
    """Peak bytes allocated while fn(*args) runs, above those held before."""
    with torch.no_grad():
        if device == "cuda":  # PyTorch counts the peak itself
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


# --8<-- [end:peak_bytes]

if __name__ == "__main__":
    # --8<-- [start:peak]
    def naive_attention(q, k, v):
        """softmax(q kᵀ / √d_k) v, keeping the full (..., L, L) scores."""
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        return torch.softmax(scores, dim=-1) @ v

    def blocked(q, k, v):
        return blocked_attention(q, k, v, block, block)

    torch.manual_seed(0)
    H, d_k, block = 4, 64, 128  # one sequence, 4 heads, tiles of 128 x 128
    lengths = [256, 512, 1024, 2048]
    peak = {"naive": [], "blocked": [], "sdpa": []}
    MiB = 2**20
    tile = block * block * 4  # bytes of one float32 tile of scores
    print(
        f"one tile of scores per head, {H} heads: {H * tile / MiB:g} MiB in all"
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a CPU kernel's scratch memory grows with threads
    for L in lengths:
        q, k, v = torch.randn(3, 1, H, L, d_k).to(device)
        peak["naive"].append(peak_bytes(naive_attention, q, k, v))
        peak["blocked"].append(peak_bytes(blocked, q, k, v))
        peak["sdpa"].append(peak_bytes(F.scaled_dot_product_attention, q, k, v))
        scores = H * L * L * 4  # bytes of the float32 scores, H x L x L
        naive, tiled, fused = (peak[name][-1] / MiB for name in peak)
        print(
            f"L={L:>4}: scores {scores / MiB:>2g} MiB; peak naive {naive:.1f}, "
            f"blocked {tiled:.1f}, SDPA {fused:.1f} MiB"
        )
    torch.set_num_threads(threads)
    # --8<-- [end:peak]
