"""ALiBi (Press et al., arXiv 2108.12409): linear biases on the scores."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:functions]
import math

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def alibi_slopes(num_heads):
    """One slope m per head, H = num_heads: 2^(-8/H), 2^(-16/H), ...

    The paper gives this rule for any H; the authors' code uses it only
    when H is a power of 2.
    """
    # other head counts, as in the authors' code (not the paper): the slopes
    # for the largest power of 2 below H, then every other slope for twice as
    # many heads
    closest = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * (h + 1) / closest) for h in range(closest)]
    extra = num_heads - closest
    slopes += [2 ** (-4 * (2 * h + 1) / closest) for h in range(extra)]
    return torch.tensor(slopes)


def alibi_bias(num_heads, length, device=None):
    """(H, L, L) float mask: slope_h * (j - i) for key j <= query i.

    Keys after the query get -inf (causal), as in the paper's language
    models. Pass it as attn_mask to F.scaled_dot_product_attention.
    """
    slopes = alibi_slopes(num_heads).to(device)  # (H,)
    i = torch.arange(length, device=device)
    distance = i[None, :] - i[:, None]  # (L, L): j - i, 0 on the diagonal
    bias = slopes[:, None, None] * distance  # (H, L, L)
    return bias.masked_fill(distance > 0, float("-inf"))


print([f"1/{round(1 / s)}" for s in alibi_slopes(8).tolist()])
print(alibi_bias(8, 5, device=device)[0].cpu())  # head 0: slope 1/2
# --8<-- [end:functions]

# --8<-- [start:sdpa]
import torch.nn.functional as F

torch.manual_seed(0)
B, H, L, d_k = 2, 8, 6, 4
q, k, v = (torch.randn(B, H, L, d_k).to(device) for _ in range(3))
bias = alibi_bias(H, L, device=device)  # (H, L, L) broadcasts over B
out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # (B, H, L, d_k)

# by hand: add the bias to the scaled scores, then softmax
scores = q @ k.transpose(-2, -1) / d_k**0.5 + bias  # (B, H, L, L)
by_hand = torch.softmax(scores, dim=-1) @ v  # (B, H, L, d_k)
print(
    tuple(out.shape),
    "same as by hand:",
    torch.allclose(out, by_hand, atol=1e-6),
)
# --8<-- [end:sdpa]

# --8<-- [start:relative]
long = alibi_bias(H, 100, device=device)  # (H, 100, 100)
# any 6-token window of a long sequence gets the same biases as L = 6
print(
    "window 50..55 of 100 == L = 6:", torch.equal(long[:, 50:56, 50:56], bias)
)
print("L = 100:", tuple(long.shape))
# --8<-- [end:relative]

# the figure: every head's bias for 8 tokens
figure_bias = alibi_bias(H, 8)
figure_slopes = alibi_slopes(H)
