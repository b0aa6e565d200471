"""Bug: scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_k).

Found and fixed in karpathy/ng-video-lecture, pull request #6.
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model, d_k = 1, 4, 32, 8  # one head of width d_k (H = 4)
x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)
w_q, w_k, w_v = (
    torch.randn(d_model, d_k).to(device) / d_model**0.5 for _ in range(3)
)  # 3 × (d_model, d_k)


def head_buggy(x):
    B, L, C = x.shape  # C is d_model, the width of x
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # 3 × (B, L, d_k)
    scores = q @ k.transpose(-2, -1) * C**-0.5  # bug: 1/sqrt(d_model)
    causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    return scores.softmax(dim=-1) @ v


# --8<-- [end:bug]


# --8<-- [start:check]
def check(head):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    reference = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    diff = (head(x) - reference).abs().max().item()
    print(f"max |head - sdpa| = {diff:.4f}")


check(head_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def head_fixed(x):
    B, L, C = x.shape
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # 3 × (B, L, d_k)
    scores = q @ k.transpose(-2, -1) * k.size(-1) ** -0.5  # 1/sqrt(d_k)
    causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    return scores.softmax(dim=-1) @ v


check(head_fixed)
# --8<-- [end:fix]
