"""Why divide by √d_k: var(q·k) grows like d_k and saturates softmax."""

# --8<-- [start:variance]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

g = torch.Generator().manual_seed(0)
n_pairs = 2000  # pairs (q, k) per d_k
d_ks = [4, 16, 64, 256, 1024]
raw_var, scaled_var = [], []
for d_k in d_ks:
    # entries with mean 0 and variance 1, as in the paper's footnote
    q = torch.randn(n_pairs, d_k, generator=g).to(device)  # (n_pairs, d_k)
    k = torch.randn(n_pairs, d_k, generator=g).to(device)  # (n_pairs, d_k)
    dots = (q * k).sum(dim=-1)  # (n_pairs,): n_pairs dot products
    raw_var.append(dots.var().item())
    scaled_var.append((dots / d_k**0.5).var().item())
    raw, scaled = raw_var[-1], scaled_var[-1]
    print(f"d_k={d_k:4d}  var(q·k)={raw:5.0f}  var(q·k/√d_k)={scaled:.2f}")
# --8<-- [end:variance]

# --8<-- [start:saturation]
rows, n_keys = 256, 16  # 256 queries, each scored against its own 16 keys
max_weight = {"raw": [], "scaled": []}
grad_norm = {"raw": [], "scaled": []}
print(" d_k  max weight: raw / scaled  median |grad|: raw / scaled")
for d_k in d_ks:
    # float64: float32 rounding would show in the tiny raw gradients
    q = torch.randn(rows, 1, d_k, generator=g).to(device, torch.float64)
    k = torch.randn(rows, n_keys, d_k, generator=g).to(device, torch.float64)
    dots = (q * k).sum(dim=-1)  # (rows, n_keys): one row of scores per query
    # u: the gradient from above
    u = torch.randn(rows, n_keys, generator=g).to(device, torch.float64)
    for name, s in (("raw", dots), ("scaled", dots / d_k**0.5)):
        s.requires_grad_()
        weights = torch.softmax(s, dim=-1)  # (rows, n_keys)
        (weights * u).sum().backward()  # s.grad: gradient w.r.t. the scores
        max_weight[name].append(weights.max(dim=-1).values.mean().item())
        grad_norm[name].append(s.grad.norm(dim=-1).median().item())
    w = [max_weight[name][-1] for name in ("raw", "scaled")]
    gn = [grad_norm[name][-1] for name in ("raw", "scaled")]
    print(f"{d_k:4d}{w[0]:17.3f} / {w[1]:.3f}{gn[0]:19.1e} / {gn[1]:.1e}")
# --8<-- [end:saturation]
