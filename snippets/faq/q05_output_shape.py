"""Q5: one head gives (L, d_v); concatenated heads and W^O give X's shape."""

# --8<-- [start:heads]
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model, H = 1, 5, 8, 4
d_v = d_model // H
mha = nn.MultiheadAttention(d_model, H, batch_first=True).to(device)
X = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)

with torch.no_grad():
    # the same computation by hand, with mha's own weights
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)  # 3 × (d_model, d_model)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)

    def split(t):  # (B, L, d_model) -> (B, H, L, d_v)
        return t.view(B, L, H, d_v).transpose(1, 2)

    Q = split(X @ w_q.T + b_q)  # (B, H, L, d_v)
    K = split(X @ w_k.T + b_k)
    V = split(X @ w_v.T + b_v)
    heads = F.scaled_dot_product_attention(Q, K, V)  # (B, H, L, d_v)
    concat = heads.transpose(1, 2).reshape(B, L, H * d_v)  # (B, L, H·d_v)
    out = mha.out_proj(concat)  # (B, L, d_model): W^O

    print("X         :", tuple(X.shape))
    print("one head  :", tuple(heads[:, 0].shape))
    print("concat    :", tuple(concat.shape))
    print("after W^O :", tuple(out.shape))
    same = torch.allclose(out, mha(X, X, X)[0], atol=1e-5)
    print("same as nn.MultiheadAttention:", same)
# --8<-- [end:heads]
