"""Q = X W^Q, K = X W^K, V = X W^V with three nn.Linear layers, step by step."""

# --8<-- [start:project]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model, d_k, d_v = 4, 8, 6, 5  # 4 tokens, 8 features each

X = torch.randn(L, d_model).to(device)  # one row per token: (L, d_model)

# three independent projections; each has its own learnable matrix
w_q = nn.Linear(d_model, d_k, bias=False).to(device)
w_k = nn.Linear(d_model, d_k, bias=False).to(device)
w_v = nn.Linear(d_model, d_v, bias=False).to(device)

Q = w_q(X)  # (L, d_k)
K = w_k(X)  # (L, d_k)
V = w_v(X)  # (L, d_v)
for name, t in [("X", X), ("Q", Q), ("K", K), ("V", V)]:
    print(name, tuple(t.shape))
# --8<-- [end:project]

# --8<-- [start:roles]
# (L, d_k) @ (d_k, L) -> (L, L); S[i, j] = q_i · k_j / √d_k
S = Q @ K.T / d_k**0.5  # (L, L)
A = torch.softmax(S, dim=-1)  # (L, L): row i, what token i takes from each
Z = A @ V  # (L, L) @ (L, d_v) -> (L, d_v)
print("S", tuple(S.shape), "Z", tuple(Z.shape))

# S[0, 2] compares what token 0 asks for with what token 2 offers
s_02 = Q[0] @ K[2] / d_k**0.5
print(f"S[0, 2] = {S[0, 2].item():.4f}, q_0 · k_2 / √d_k = {s_02.item():.4f}")
# Q and K differ, so "0 looks at 2" is no longer "2 looks at 0"
print(f"S[2, 0] = {S[2, 0].item():.4f}")
# Z[0] mixes whole rows of V with the weights of row 0
z_0 = sum(A[0, j] * V[j] for j in range(L))  # (d_v,)
print(f"max |Z[0] - z_0| = {(Z[0] - z_0).abs().max().item():.6f}")
# --8<-- [end:roles]

# --8<-- [start:widths]
w_k_wide = nn.Linear(d_model, d_k + 1, bias=False).to(device)
K_wide = w_k_wide(X)  # (L, d_k + 1): keys one number longer than the queries
try:
    Q @ K_wide.T
except RuntimeError as error:
    print("RuntimeError:", error)

# V may have its own width d_v; it only sets the width of the output
out = nn.functional.scaled_dot_product_attention(Q, K, V)  # (L, d_v)
print("output", tuple(out.shape))
print(f"max |out - Z| = {(out - Z).abs().max().item():.6f}")  # Z: by hand
# --8<-- [end:widths]

# --8<-- [start:weight]
print("w_q.weight", tuple(w_q.weight.shape))  # (out_features, in_features)

W_Q = w_q.weight.T  # (d_model, d_k): the W^Q of the formula
print("W_Q", tuple(W_Q.shape))
print(f"max |X W_Q - Q| = {(X @ W_Q - Q).abs().max().item():.6f}")

# row k of the weight holds the coefficients of output feature k
col_1 = X @ w_q.weight[1]  # (L,): column 1 of Q
print(f"max |Q[:, 1] - col_1| = {(Q[:, 1] - col_1).abs().max().item():.6f}")

# row i of Q comes from row i of X alone: tokens are not mixed here
row_2 = X[2] @ W_Q  # (d_k,): row 2 of Q
print(f"max |Q[2] - row_2| = {(Q[2] - row_2).abs().max().item():.6f}")
# --8<-- [end:weight]
