"""One Transformer block by hand: attention, add & norm, MLP, add & norm."""

# --8<-- [start:block]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model, H = 2, 5, 16, 4
attn = nn.MultiheadAttention(d_model, H, batch_first=True).to(device)
mlp = nn.Sequential(
    nn.Linear(d_model, 4 * d_model),
    nn.ReLU(),
    nn.Linear(4 * d_model, d_model),
).to(device)
norm1 = nn.LayerNorm(d_model).to(device)
norm2 = nn.LayerNorm(d_model).to(device)


def block(x):
    """Post-norm, as in the paper: add the sublayer's output, then norm."""
    a, _ = attn(x, x, x, need_weights=False)  # tokens look at each other
    h = norm1(x + a)  # add & norm
    m = mlp(h)  # each token alone
    return norm2(h + m)  # add & norm


x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)
out = block(x)  # (B, L, d_model)
print(tuple(x.shape), "->", tuple(out.shape))
# --8<-- [end:block]


# --8<-- [start:pre_norm]
def pre_norm_block(x):
    """Pre-norm: norm the sublayer's input; the residual path stays clean."""
    n = norm1(x)
    a, _ = attn(n, n, n, need_weights=False)
    h = x + a
    return h + mlp(norm2(h))


print(tuple(pre_norm_block(x).shape))
# --8<-- [end:pre_norm]
