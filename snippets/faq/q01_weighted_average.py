"""Q1: every output row of attention is a weighted average of the rows of V."""

# --8<-- [start:weighted_average]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model, d_k, d_v = 4, 8, 3, 3
X = torch.randn(L, d_model).to(device)  # (L, d_model): 4 tokens, 8 features
# three random projections (d_v = d_k here), scaled like a usual initialisation
W_Q, W_K, W_V = torch.randn(3, d_model, d_k).to(device) / d_model**0.5

Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # 3 × (L, d_k)
A = torch.softmax(Q @ K.T / d_k**0.5, dim=-1)  # (L, L), computed from X
out = A @ V  # (L, d_v): row i = sum_j A[i, j] * V[j]

nonnegative = bool((A >= 0).all())
rows_sum_to_1 = torch.allclose(A.sum(dim=-1), torch.ones(L, device=device))
print("weights >= 0:", nonnegative, " rows sum to 1:", rows_sum_to_1)
# a weighted average never leaves the range of what it averages
lo, hi = V.min(dim=0).values, V.max(dim=0).values
print("output inside V's range:", bool(((out >= lo) & (out <= hi)).all()))
sdpa = F.scaled_dot_product_attention(Q, K, V)  # (L, d_v)
print("same as PyTorch:", torch.allclose(out, sdpa, atol=1e-5))
print("X:", tuple(X.shape), "-> output:", tuple(out.shape))
# --8<-- [end:weighted_average]
