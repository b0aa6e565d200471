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
print(
    torch.allclose(out, F.scaled_dot_product_attention(x, x, x, is_causal=True))
)

# nn.MultiheadAttention: True = hidden, so hand it ~keep
mha = nn.MultiheadAttention(d_model, H, batch_first=True).to(device)
_, weights = mha(x, x, x, attn_mask=~keep)  # (1, L, L), averaged over heads
print((weights[0] > 0).long().cpu())  # where attention went: keep's pattern
# --8<-- [end:conventions]

# --8<-- [start:alignment]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L_q, L_k, d_k = 2, 5, 8  # 2 new queries, 5 keys (3 cached + 2 new)
q = torch.randn(1, L_q, d_k).to(device)  # (1, L_q, d_k)
k = torch.randn(1, L_k, d_k).to(device)  # (1, L_k, d_k)
v = torch.randn(1, L_k, d_k).to(device)  # (1, L_k, d_k)
ones = torch.ones(L_q, L_k, dtype=torch.bool)
top_left = ones.tril().to(device)  # what is_causal=True builds
lower_right = ones.tril(diagonal=L_k - L_q).to(device)  # decoding needs this
print(top_left.long().cpu())
print(lower_right.long().cpu())
causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
masked = F.scaled_dot_product_attention(q, k, v, attn_mask=top_left)
print(torch.allclose(causal, masked, atol=1e-6))
# --8<-- [end:alignment]
