"""Bug: heads merged with reshape alone, no permute back.

Fixed in jsbaan/transformer-from-scratch, pull request #6 (issue #4).
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
    q, k, v = (t.view(B, L, H, d_k).transpose(1, 2) for t in (Q, K, V))
    out = F.scaled_dot_product_attention(q, k, v)  # (B, H, L, d_k)
    return out.reshape(B, L, d_model)  # bug: no transpose back first


# --8<-- [end:bug]


# --8<-- [start:check]
def check(heads):
    cols = [slice(i * d_k, (i + 1) * d_k) for i in range(H)]
    reference = torch.cat(
        [
            F.scaled_dot_product_attention(Q[..., c], K[..., c], V[..., c])
            for c in cols
        ],
        dim=-1,
    )  # (2, 5, 12): head 0's columns, then head 1's, ...
    diff = (heads(Q, K, V) - reference).abs().max().item()
    print(f"max |out - one head at a time| = {diff:.4f}")


check(heads_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def heads_fixed(Q, K, V):
    B, L, d_model = Q.shape
    q, k, v = (t.view(B, L, H, d_k).transpose(1, 2) for t in (Q, K, V))
    out = F.scaled_dot_product_attention(q, k, v)  # (B, H, L, d_k)
    return out.transpose(1, 2).reshape(B, L, d_model)  # (B, L, H, d_k) first


check(heads_fixed)
# --8<-- [end:fix]
