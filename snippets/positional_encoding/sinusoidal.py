"""The sinusoidal encoding of Vaswani et al. 2017, section 3.5."""

# --8<-- [start:encoding]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def frequencies(d_model, base=10000.0, device=None):
    """ω_i = base^(-2i / d_model), one per (sin, cos) pair: (d_model/2,)."""
    i = torch.arange(0, d_model, 2, device=device, dtype=torch.float32)
    return base ** (-i / d_model)


def sinusoidal_encoding(length, d_model, base=10000.0, device=None):
    """PE[pos, 2i] = sin(pos ω_i), PE[pos, 2i+1] = cos(pos ω_i)."""
    if not (isinstance(length, int) and isinstance(d_model, int)):
        raise TypeError(
            f"length and d_model must be int, got {length!r}, {d_model!r}"
        )
    if length < 1 or d_model < 2 or d_model % 2:
        raise ValueError(
            f"need length >= 1 and an even d_model >= 2, got "
            f"length={length}, d_model={d_model}"
        )
    pos = torch.arange(length, device=device, dtype=torch.float32)
    angle = pos[:, None] * frequencies(d_model, base, device)  # (L, d/2)
    pe = torch.empty(length, d_model, device=device)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


pe = sinusoidal_encoding(64, 32, device=device)
print(tuple(pe.shape))
print(pe[:3, :6].round(decimals=4).cpu())
# --8<-- [end:encoding]


# --8<-- [start:shift]
def shift_matrix(k, d_model, base=10000.0, device=None):
    """M_k, block diagonal: PE[pos + k] = M_k @ PE[pos] for every pos."""
    theta = k * frequencies(d_model, base, device)  # one angle per pair
    c, s = torch.cos(theta), torch.sin(theta)
    rows = [torch.stack([c, s], -1), torch.stack([-s, c], -1)]
    blocks = torch.stack(rows, -2)  # (d/2, 2, 2): one rotation per pair
    return torch.block_diag(*blocks)  # (d, d)


for k in [1, 3, 20]:
    M = shift_matrix(k, 32, device=device)
    moved = pe[:-k] @ M.T  # row pos becomes M_k @ PE[pos]
    print(
        f"k={k:>2}: PE[pos + k] == M_k PE[pos] for all pos:",
        torch.allclose(moved, pe[k:], atol=1e-5),
    )
print(shift_matrix(3, 32, device=device)[:2, :2].round(decimals=4).cpu())
# --8<-- [end:shift]

# --8<-- [start:relative_dot]
G = pe @ pe.T  # G[p, q] = PE(p) · PE(q)
omega = frequencies(32, device=device)
for k in [0, 1, 5, 20]:
    pairs = G.diagonal(offset=k)  # every (p, p + k)
    formula = torch.cos(k * omega).sum()  # sum over i of cos(k ω_i)
    same = torch.allclose(pairs, formula.expand_as(pairs), atol=1e-4)
    print(
        f"k={k:>2}: all {pairs.numel()} pairs equal sum cos(k ω_i) = "
        f"{formula.round(decimals=3).item():.3f}: {same}"
    )
print("symmetric, k and -k alike:", torch.allclose(G, G.T, atol=1e-5))

# after the projections of attention the scores lose this property
torch.manual_seed(0)
W_q, W_k = (torch.randn(32, 32).to(device) / 32**0.5 for _ in range(2))
scores = (pe @ W_q) @ (pe @ W_k).T
pairs = scores.diagonal(offset=5)
print(
    "PE W^Q · PE W^K depends only on p - q:",
    torch.allclose(pairs, pairs[:1].expand_as(pairs), atol=1e-4),
)
# --8<-- [end:relative_dot]
