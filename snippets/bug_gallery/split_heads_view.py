"""Bug: heads split with view alone, no transpose.

Reported in reczoo/FuxiCTR, issue #30 (AutoInt, DESTINE, InterHAt).
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model, H = 2, 5, 12, 3
d_k = d_model // H
Q, K, V = (torch.randn(B, L, d_model).to(device) for _ in range(3))


def heads_buggy(Q, K, V):
    B, L, d_model = Q.shape
    # bug: (B, L, d_model) read as (B * H, L, d_k) mixes tokens and heads
    q, k, v = (t.view(B * H, -1, d_k) for t in (Q, K, V))  # 3 × (B·H, L, d_k)
    out = F.scaled_dot_product_attention(q, k, v)  # (B * H, L, d_k)
    return out.view(B, -1, d_model)  # (B, L, d_model)


# --8<-- [end:bug]


# --8<-- [start:check]
def check(heads):
    # head i reads columns i * d_k ... (i + 1) * d_k - 1 of every token
    cols = [slice(i * d_k, (i + 1) * d_k) for i in range(H)]
    reference = torch.cat(
        [
            F.scaled_dot_product_attention(Q[..., c], K[..., c], V[..., c])
            for c in cols
        ],
        dim=-1,
    )  # (2, 5, 12): the heads side by side
    diff = (heads(Q, K, V) - reference).abs().max().item()
    print(f"max |out - one head at a time| = {diff:.4f}")


check(heads_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def heads_fixed(Q, K, V):
    B, L, d_model = Q.shape
    # split the last dimension, then bring H forward: (B, H, L, d_k)
    q, k, v = (t.view(B, L, H, d_k).transpose(1, 2) for t in (Q, K, V))
    out = F.scaled_dot_product_attention(q, k, v)  # (B, H, L, d_k)
    return out.transpose(1, 2).reshape(B, L, d_model)


check(heads_fixed)
# --8<-- [end:fix]
