"""Softmax(X Xᵀ) X step by step: similarities, softmax weights, weighted sum."""

# --8<-- [start:data]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

tokens = ["cat", "dog", "car"]
# one row per token, one column per feature: X has shape (L, d) = (3, 4)
X = torch.tensor(
    [
        [1.0, 0.8, 0.1, 0.0],  # cat
        [0.9, 1.0, 0.0, 0.2],  # dog
        [0.0, 0.1, 1.0, 0.9],  # car
    ],
    device=device,
)  # (3, 4): (L, d)
print(X.shape)
# --8<-- [end:data]

# --8<-- [start:similarity]
S = X @ X.T  # (3, 4) @ (4, 3) -> (3, 3); S[i, j] = X[i] · X[j]
print(S.cpu())
# --8<-- [end:similarity]

# --8<-- [start:softmax]
A = torch.softmax(S, dim=-1)  # normalise each row
print(A.cpu())
print(A.sum(dim=-1).round(decimals=4).cpu())  # sums rounded to 4 places
# --8<-- [end:softmax]

# --8<-- [start:softmax_order]
scores = torch.tensor(
    [
        [3.2, 0.5, -1.0],
        [0.8, 2.1, 0.2],
        [-0.5, 0.1, 1.4],
    ],
    device=device,
)
weights = torch.softmax(scores, dim=-1)  # (3, 3)
print(weights.cpu())

# the same thing by hand: exponentiate, then divide by the row sum
by_hand = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)  # (3, 3)
print(f"max |weights - by_hand| = {(weights - by_hand).abs().max():.6f}")

# each row's positions from the smallest to the largest: the same order
print(scores.argsort(dim=-1).cpu())
print(weights.argsort(dim=-1).cpu())
# --8<-- [end:softmax_order]

# --8<-- [start:weighted_sum]
Z = A @ X  # (3, 3) @ (3, 4) -> (3, 4)
print(Z.cpu())
# --8<-- [end:weighted_sum]

# --8<-- [start:whole_rows]
# row 0 of Z mixes whole rows of X, weighted by row 0 of A
z0 = A[0, 0] * X[0] + A[0, 1] * X[1] + A[0, 2] * X[2]  # (4,): (d,)
print(z0.cpu())
# --8<-- [end:whole_rows]
