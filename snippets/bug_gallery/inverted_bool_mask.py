"""Bug: a "True = hide" mask handed to an argument that reads "True = attend".

Reported in rasbt/LLMs-from-scratch, issue #1061.
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, H, L, d_k = 1, 2, 4, 8
q, k, v = (torch.randn(B, H, L, d_k).to(device) for _ in range(3))


def attend_buggy(q, k, v):
    L = q.size(-2)
    # True above the diagonal: the future, "hide" for masked_fill
    mask = torch.triu(torch.ones(L, L, device=q.device), diagonal=1).bool()
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # bug


# --8<-- [end:bug]


# --8<-- [start:check]
def check(attend):
    """Change the last token's key and value: may earlier queries notice?"""
    k2, v2 = k.clone(), v.clone()  # 2 × (B, H, L, d_k)
    k2[..., -1, :] += 1.0
    v2[..., -1, :] += 1.0
    change = attend(q, k2, v2) - attend(q, k, v)  # (B, H, L, d_k)
    seen = change[0, 0, :-1].abs().amax(dim=-1) > 1e-6  # queries 0..L-2
    print("queries 0..2 see the last token:", seen.tolist())


check(attend_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def attend_fixed(q, k, v):
    L = q.size(-2)
    hide = torch.triu(torch.ones(L, L, device=q.device), diagonal=1).bool()
    return F.scaled_dot_product_attention(q, k, v, attn_mask=~hide)  # keep


check(attend_fixed)
# --8<-- [end:fix]
