"""Q8: var(q·k) grows like d_k; dividing by √d_k brings it back to about 1."""

# --8<-- [start:variance]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

generator = torch.Generator().manual_seed(0)  # CPU data: same on every device
n_pairs = 4000
d_ks = [4, 16, 64, 256, 1024]
raw_var, scaled_var = [], []
for d_k in d_ks:
    shape = (2, n_pairs, d_k)  # components: independent, mean 0, variance 1
    q, k = torch.randn(shape, generator=generator, dtype=torch.float64)
    q, k = q.to(device), k.to(device)
    dots = (q * k).sum(dim=-1)  # n_pairs dot products q·k
    raw_var.append(dots.var().item())
    scaled_var.append((dots / d_k**0.5).var().item())
    print(f"d_k={d_k:>4}  var(q·k)={raw_var[-1]:7.1f}", end="  ")
    print(f"var(q·k/√d_k)={scaled_var[-1]:.2f}")
# --8<-- [end:variance]

# --8<-- [start:saturation]
# the largest weight in a softmax row over 32 keys, averaged over many rows
n_keys = 32


def mean_largest_weight(scores):
    """Softmax each row of (..., n, n_keys) scores; mean of the rows' maxima."""
    if scores.ndim < 2 or scores.shape[-1] == 0:
        raise ValueError(
            f"need (..., n, keys) scores, got {tuple(scores.shape)}"
        )
    return torch.softmax(scores, dim=-1).amax(dim=-1).mean().item()


peak = {"none": [], "sqrt": [], "d_k": []}
print(f"largest weight in a row of {n_keys} (uniform: {1 / n_keys:.3f})")
titles = "".join(f"{title:>10}" for title in ["no scale", "/√d_k", "/d_k"])
print(" " * 9 + titles)
for d_k in d_ks:
    shape = (2, 256, n_keys, d_k)  # 256 random (Q, K) pairs, 32 tokens each
    Q, K = torch.randn(shape, generator=generator, dtype=torch.float64)
    Q, K = Q.to(device), K.to(device)
    scores = Q @ K.transpose(-2, -1)
    peak["none"].append(mean_largest_weight(scores))
    peak["sqrt"].append(mean_largest_weight(scores / d_k**0.5))
    peak["d_k"].append(mean_largest_weight(scores / d_k))
    row = "".join(f"{peak[key][-1]:>10.3f}" for key in peak)
    print(f"d_k={d_k:>4} {row}")
# --8<-- [end:saturation]
