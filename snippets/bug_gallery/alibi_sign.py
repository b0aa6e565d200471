"""Bug: ALiBi's bias with the wrong sign: distant keys get a bonus.

Fixed in meta-pytorch/attention-gym, pull request #86.
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

L, d_k, m = 5, 4, 0.5  # m: this head's ALiBi slope


def alibi_buggy(L):
    i = torch.arange(L, device=device)[:, None]  # (L, 1): query position i
    j = torch.arange(L, device=device)[None, :]  # (1, L): key position j
    bias = m * (i - j)  # (L, L); bug: +m * distance, a reward
    return bias.float().masked_fill(j > i, float("-inf"))  # causal


# --8<-- [end:bug]


# --8<-- [start:check]
def check(alibi):
    # equal scores everywhere (q = 0): the weights come from the bias alone
    q = torch.zeros(1, 1, L, d_k, device=device)  # (1, 1, L, d_k)
    eye = torch.eye(L, device=device).expand(1, 1, L, L)  # V = identity
    weights = F.scaled_dot_product_attention(q, q, eye, attn_mask=alibi(L))
    last = weights[0, 0, -1]  # (L,): the last query's weights
    print("last query's weights:", last.round(decimals=4).cpu())
    print("nearer keys weigh more:", bool((last.diff() > 0).all()))


check(alibi_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def alibi_fixed(L):
    i = torch.arange(L, device=device)[:, None]  # (L, 1): query position i
    j = torch.arange(L, device=device)[None, :]  # (1, L): key position j
    bias = m * (j - i)  # (L, L): -m * (i - j), a penalty for distance
    return bias.float().masked_fill(j > i, float("-inf"))  # causal


check(alibi_fixed)
# --8<-- [end:fix]
