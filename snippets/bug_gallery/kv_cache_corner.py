"""Bug: is_causal=True on a step with cached keys (L_q < L_k).

Fixed in pytorch/executorch, pull request #21749.
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L_k, L_q, d_k = 6, 2, 8  # 4 tokens in the cache, 2 new ones
q_all, k, v = (torch.randn(1, 1, L_k, d_k).to(device) for _ in range(3))
q = q_all[:, :, -L_q:]  # (1, 1, L_q, d_k): only the new tokens ask


def step_buggy(q, k, v):
    # bug: for L_q != L_k the triangle starts at the top-left corner
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


# --8<-- [end:bug]


# --8<-- [start:check]
def check(step):
    # the right answer: all tokens at once, keep the last L_q rows
    full = F.scaled_dot_product_attention(q_all, k, v, is_causal=True)
    diff = (step(q, k, v) - full[:, :, -L_q:]).abs().max().item()
    print(f"max |step - full recomputation| = {diff:.4f}")


check(step_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def step_fixed(q, k, v):
    L_q, L_k = q.size(-2), k.size(-2)
    keep = torch.ones(L_q, L_k, dtype=torch.bool, device=q.device)  # (L_q, L_k)
    keep = keep.tril(L_k - L_q)  # (L_q, L_k): bottom-right corner
    return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)


check(step_fixed)
# --8<-- [end:fix]
