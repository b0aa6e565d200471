"""The sinusoidal encoding of Vaswani et al. 2017, section 3.5."""

# --8<-- [start:encoding]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def frequencies(d_model, base=10000.0, device=None):
    """ω_p = base^(-2p / d_model), one per (sin, cos) pair p: (d_model/2,)."""
    two_p = torch.arange(0, d_model, 2, device=device, dtype=torch.float32)
    return base ** (-two_p / d_model)


def sinusoidal_encoding(length, d_model, base=10000.0, device=None):
    """PE[pos, 2p] = sin(pos ω_p), PE[pos, 2p+1] = cos(pos ω_p)."""
    pos = torch.arange(length, device=device, dtype=torch.float32)  # (L,)
    angle = pos[:, None] * frequencies(d_model, base, device)  # (L, d_model/2)
    pe = torch.empty(length, d_model, device=device)  # (L, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


pe = sinusoidal_encoding(64, 32, device=device)  # (64, 32): (L, d_model)
print(tuple(pe.shape))
print(pe[:3, :6].round(decimals=4).cpu())
# --8<-- [end:encoding]


# --8<-- [start:shift]
def shift_matrix(k, d_model, base=10000.0, device=None):
    """M_k, block diagonal: PE[pos + k] = M_k @ PE[pos] for every pos."""
    theta = k * frequencies(d_model, base, device)  # (d_model/2,): one per pair
    c, s = torch.cos(theta), torch.sin(theta)
    rows = [torch.stack([c, s], -1), torch.stack([-s, c], -1)]
    blocks = torch.stack(rows, -2)  # (d_model/2, 2, 2): one per pair
    return torch.block_diag(*blocks)  # (d_model, d_model)


for k in [1, 3, 20]:
    M = shift_matrix(k, 32, device=device)  # (32, 32)
    moved = pe[:-k] @ M.T  # (64 - k, 32): row pos is M_k @ PE[pos]
    print(
        f"k={k:>2}: PE[pos + k] == M_k PE[pos] for all pos:",
        torch.allclose(moved, pe[k:], atol=1e-5),
    )
print(shift_matrix(3, 32, device=device)[:2, :2].round(decimals=4).cpu())
# --8<-- [end:shift]

# --8<-- [start:relative_dot]
G = pe @ pe.T  # (64, 64): G[i, j] = PE(i) · PE(j)
omega = frequencies(32, device=device)  # (16,)
for k in [0, 1, 5, 20]:
    diagonal = G.diagonal(offset=k)  # (64 - k,): PE(i) · PE(i + k)
    formula = torch.cos(k * omega).sum()  # sum over pairs p of cos(k ω_p)
    same = torch.allclose(diagonal, formula.expand_as(diagonal), atol=1e-4)
    print(
        f"k={k:>2}: PE(i) · PE(i + k) = sum cos(k ω_p) = "
        f"{formula.round(decimals=3).item():.3f} for all {diagonal.numel()} i:",
        same,
    )
print("symmetric, k and -k alike:", torch.allclose(G, G.T, atol=1e-5))

# after the projections of attention the scores lose this property
torch.manual_seed(0)
W_Q, W_K = (torch.randn(32, 32).to(device) / 32**0.5 for _ in range(2))
scores = (pe @ W_Q) @ (pe @ W_K).T  # (64, 64)
diagonal = scores.diagonal(offset=5)  # (59,): (PE(i) W^Q) · (PE(i + 5) W^K)
first = "  ".join(f"{value:.3f}" for value in diagonal[:4].tolist())
print("after W^Q and W^K, k= 5, i = 0, 1, 2, 3:", first)
# --8<-- [end:relative_dot]
