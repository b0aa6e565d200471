"""Q20: without positions, self-attention is permutation-equivariant."""

# --8<-- [start:permutation]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model = 6, 16
mha = nn.MultiheadAttention(d_model, num_heads=4, batch_first=True).to(device)
x = torch.randn(1, L, d_model).to(device)  # (1, L, d_model)
perm = torch.randperm(L).to(device)  # (L,): a new token order
shuffled = x[:, perm]  # (1, L, d_model)
print("new order:", perm.tolist())


def attend(tokens, positions=None, mask=None):
    """Self-attention over (1, L, d_model) tokens; positions belong to slots."""
    if positions is not None:
        tokens = tokens + positions  # slot i gets vector i, whatever sits there
    return mha(tokens, tokens, tokens, attn_mask=mask)[0]


def rows_follow(positions=None, mask=None):
    """Do the output rows move exactly like the shuffled input rows?"""
    moved = attend(shuffled, positions, mask)
    return torch.allclose(moved, attend(x, positions, mask)[:, perm], atol=1e-5)


positions = torch.randn(1, L, d_model).to(device)  # stands in for any encoding
causal = torch.ones(L, L, dtype=torch.bool).triu(1).to(device)  # True = blocked
print("no positions   -> rows follow the shuffle:", rows_follow())
print("with positions -> rows follow the shuffle:", rows_follow(positions))
print("causal mask    -> rows follow the shuffle:", rows_follow(mask=causal))
# --8<-- [end:permutation]
