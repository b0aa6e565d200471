"""Q6: Q Kᵀ transposes the last two dimensions of K so that rows meet rows."""

# --8<-- [start:transpose]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
Q = torch.randn(4, 3).to(device)  # 4 queries, d_k = 3
K = torch.randn(5, 3).to(device)  # 5 keys,    d_k = 3

S = Q @ K.T  # (4, 3) @ (3, 5) -> (4, 5)
print(tuple(S.shape))
print("S[1, 2] == Q[1]·K[2]:", torch.allclose(S[1, 2], torch.dot(Q[1], K[2])))
try:
    Q @ K  # (4, 3) @ (5, 3): inner sizes 3 and 5 do not match
except RuntimeError as error:
    print(error)
# --8<-- [end:transpose]

# --8<-- [start:batched]
# (B, h, m, d_k) -> (B, h, d_k, m): swap only the last two dimensions
Qb = torch.randn(2, 8, 4, 3).to(device)
Kb = torch.randn(2, 8, 5, 3).to(device)
print(tuple((Qb @ Kb.transpose(-2, -1)).shape))
print("K.mT is the same:", torch.equal(Kb.transpose(-2, -1), Kb.mT))
# --8<-- [end:batched]
