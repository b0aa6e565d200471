"""Softmax over the wrong dimension: no error, but rows no longer sum to 1."""

# --8<-- [start:softmax]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, H, L = 1, 2, 4
# a row per query, a column per key
scores = torch.randn(B, H, L, L).to(device)  # (B, H, L, L)

right = torch.softmax(scores, dim=-1)  # (B, H, L, L): over the keys
over_queries = torch.softmax(scores, dim=-2)  # (B, H, L, L)
over_heads = torch.softmax(scores, dim=1)  # (B, H, L, L)

for name, weights in [
    ("dim=-1", right),
    ("dim=-2", over_queries),
    ("dim=1 ", over_heads),
]:
    row_sums = weights.sum(dim=-1)[0, 0]  # (L,): head 0, one sum per query
    print(name, "row sums of head 0:", [round(s, 4) for s in row_sums.tolist()])

# dim=-2 normalised each column (one per key) instead of each row
col_sums = over_queries.sum(dim=-2)[0, 0]  # (L,)
print("dim=-2 column sums:", [round(s, 4) for s in col_sums.tolist()])
# --8<-- [end:softmax]
