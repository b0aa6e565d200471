"""softmax(Q Kᵀ / √d_k) V in four steps, on a small seeded example."""

# ruff: noqa: E402  (each section imports what it first uses, as the page shows)

# --8<-- [start:data]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

tokens = ["t0", "t1", "t2", "t3"]  # names only: the numbers are random
torch.manual_seed(519)
# random stand-ins for the projections of chapter 2: one row per token
Q = torch.randn(4, 6).to(device)  # (4, 6): queries, L × d_k
K = torch.randn(4, 6).to(device)  # (4, 6): keys, L × d_k
V = torch.randn(4, 5).to(device)  # (4, 5): values, L × d_v
print(Q.shape, K.shape, V.shape)
# --8<-- [end:data]

# --8<-- [start:step1]
# step 1: every query against every key
scores = Q @ K.transpose(-2, -1)  # (4, 6) @ (6, 4) -> (4, 4)
print(scores.cpu())
# scores[1, 2] is the dot product of row 1 of Q and row 2 of K
print((Q[1] @ K[2]).cpu())
# --8<-- [end:step1]

# --8<-- [start:step2]
# step 2: divide by √d_k
d_k = K.shape[-1]  # a Python int, not a tensor
scaled = scores / d_k**0.5  # (4, 4)
print(scaled.cpu())
# --8<-- [end:step2]

# --8<-- [start:step3]
# step 3: softmax over the last dimension, i.e. each row separately
weights = torch.softmax(scaled, dim=-1)  # (4, 4)
print(weights.cpu())
print([round(s, 4) for s in weights.sum(dim=-1).tolist()])  # row sums
# --8<-- [end:step3]

# --8<-- [start:step4]
# step 4: mix the rows of V with the weights
output = weights @ V  # (4, 4) @ (4, 5) -> (4, 5), one row per token
print(output.shape)
# row 1 of the output: whole rows of V, weighted by row 1 of the weights
row1 = sum(weights[1, j] * V[j] for j in range(len(tokens)))  # (5,)
print(row1.cpu())
print(output[1].cpu())  # the same row, from the matrix product
# --8<-- [end:step4]
