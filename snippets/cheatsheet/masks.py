"""The cheat sheet's masks: PyTorch's two boolean conventions, and where a
causal mask aligns when there are fewer queries than keys."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:conventions]
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model, H = 4, 8, 2
x = torch.randn(1, L, d_model).to(device)  # (1, L, d_model)
keep = torch.ones(L, L, dtype=torch.bool).tril().to(device)  # True = may attend

# F.scaled_dot_product_attention: True = may attend
out = F.scaled_dot_product_attention(x, x, x, attn_mask=keep)
causal = F.scaled_dot_product_attention(x, x, x, is_causal=True)
diff = (out - causal).abs().max().item()
print(f"max |attn_mask=keep - is_causal=True|: {diff:.6f}")
# nn.MultiheadAttention: True = hidden, so hand it ~keep
mha = nn.MultiheadAttention(d_model, H, batch_first=True).to(device)
_, weights = mha(x, x, x, attn_mask=~keep)  # (1, L, L), averaged over heads
print((weights[0] > 0).long().cpu())  # where attention went: keep's pattern
# --8<-- [end:conventions]

# --8<-- [start:alignment]
import torch

L_q, L_k = 2, 5  # 2 new queries, 5 keys (3 cached + 2 new)
ones = torch.ones(L_q, L_k, dtype=torch.bool)
top_left = ones.tril()  # what is_causal=True builds
lower_right = ones.tril(diagonal=L_k - L_q)  # what decoding needs
print(top_left.long())
print(lower_right.long())
# --8<-- [end:alignment]
