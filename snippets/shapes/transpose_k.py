"""Forgetting to transpose K: an error if L != d_k, wrong values if L == d_k."""

# --8<-- [start:error]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, H, L, d_k = 2, 3, 5, 4
Q = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)
K = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)

try:
    Q @ K  # (B, H, L, d_k) @ (B, H, L, d_k): inner sizes d_k = 4 and L = 5
except RuntimeError as error:
    print("RuntimeError:", error)

# (B, H, L, d_k) @ (B, H, d_k, L) -> (B, H, L, L)
scores = Q @ K.transpose(-2, -1)  # (B, H, L, L)
print(tuple(scores.shape))
# --8<-- [end:error]

# --8<-- [start:dot_products]
# scores[b, h, i, j] is query i · key j, for sequence b and head h
q_1, k_2 = Q[0, 0, 1], K[0, 0, 2]  # 2 × (d_k,)
same = torch.allclose(scores[0, 0, 1, 2], q_1 @ k_2, atol=1e-5)
print("scores[0, 0, 1, 2] == q_1 · k_2:", same)
print("K.mT is the same:", torch.equal(K.mT, K.transpose(-2, -1)))
# --8<-- [end:dot_products]

# --8<-- [start:square]
# when L == d_k, Q @ K runs and returns an (L, L) matrix of the wrong numbers
L = d_k = 4
Q = torch.randn(L, d_k).to(device)  # (4, 4): (L, d_k)
K = torch.randn(L, d_k).to(device)  # (4, 4): (L, d_k)
wrong, right = Q @ K, Q @ K.T  # 2 × (4, 4): (L, L)
print("same shape: ", wrong.shape == right.shape)
print(f"largest |wrong - right|: {(wrong - right).abs().max().item():.2f}")

# right[i, j] is the dot product of query i and key j; wrong[i, j] is not
dots = torch.empty(L, L, device=device)  # (L, L)
for i in range(L):
    for j in range(L):
        dots[i, j] = Q[i] @ K[j]  # query i · key j
# float32 sums the products in another order: differences of rounding only
print(f"largest |right - q_i · k_j|: {(right - dots).abs().max().item():.4f}")
print(f"largest |wrong - q_i · k_j|: {(wrong - dots).abs().max().item():.4f}")
# --8<-- [end:square]
