"""Q15: grouped-query attention: G key/value heads shared by H query heads."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:packed]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
mha = nn.MultiheadAttention(16, num_heads=4).to(device)
# one tensor stores three separate matrices, stacked: packed, not tied
w_q, w_k, w_v = mha.in_proj_weight.chunk(3)  # 3 × (16, 16)
print(tuple(mha.in_proj_weight.shape), "->", tuple(w_q.shape), "x 3")
print("W^Q == W^K:", torch.equal(w_q, w_k))
print("W^K == W^V:", torch.equal(w_k, w_v))
# --8<-- [end:packed]

# --8<-- [start:gqa]
# requires torch >= 2.5: enable_gqa
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, H, G, d_k = 2, 6, 8, 2, 16  # 8 query heads share 2 key/value heads
q = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)
k = torch.randn(B, G, L, d_k).to(device)  # (2, 2, 6, 16): (B, G, L, d_k)
v = torch.randn(B, G, L, d_k).to(device)

out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
# the same as giving every query head a copy of its group's K and V:
# query heads 0-3 use K/V head 0, query heads 4-7 use K/V head 1
k_full = k.repeat_interleave(H // G, dim=1)  # (B, H, L, d_k)
v_full = v.repeat_interleave(H // G, dim=1)
expected = F.scaled_dot_product_attention(q, k_full, v_full)
torch.testing.assert_close(out, expected)
print(tuple(out.shape), "== repeat_interleave of K/V")
# --8<-- [end:gqa]
