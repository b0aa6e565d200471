"""Bug: ALiBi's bias with the wrong sign: distant keys get a bonus.

Fixed in meta-pytorch/attention-gym, pull request #86.
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

L, d_k, m = 5, 4, 0.5  # m: this head's ALiBi slope
q_idx = torch.arange(L, device=device)[:, None]  # query position i
kv_idx = torch.arange(L, device=device)[None, :]  # key position j
causal = kv_idx <= q_idx


def alibi_buggy(L):
    bias = m * (q_idx - kv_idx)  # bug: +m * distance, a reward
    return bias.float().masked_fill(~causal, float("-inf"))


# --8<-- [end:bug]


# --8<-- [start:check]
def check(alibi):
    # equal scores everywhere (q = 0): the weights come from the bias alone
    q = torch.zeros(1, 1, L, d_k, device=device)
    eye = torch.eye(L, device=device).expand(1, 1, L, L)  # V = identity
    weights = F.scaled_dot_product_attention(q, q, eye, attn_mask=alibi(L))
    last = weights[0, 0, -1]  # the last query's weight on keys 0..4
    print("last query's weights:", last.round(decimals=4).cpu())
    print("nearer keys weigh more:", bool((last.diff() > 0).all()))


check(alibi_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def alibi_fixed(L):
    bias = m * (kv_idx - q_idx)  # -m * (i - j): a penalty for distance
    return bias.float().masked_fill(~causal, float("-inf"))


check(alibi_fixed)
# --8<-- [end:fix]
