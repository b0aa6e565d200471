"""Chapter 5's exercises: the shape of a padding mask; checks that catch shape
bugs."""

# ruff: noqa: E402
# --8<-- [start:padding_mask]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

B, L = 2, 5
padding = torch.zeros(B, L, dtype=torch.bool, device=device)  # (B, L)
padding[1, -2:] = True  # sequence 1 ends in 2 pad tokens: hide these keys


def hidden_keys(H, mask):
    """Which (sequence, head) pairs get some key hidden, given scores
    (B, H, L, L) and a padding mask reshaped to `mask`."""
    scores = torch.zeros(B, H, L, L, device=device)  # any scores will do
    hidden = scores.masked_fill(mask, float("-inf")).isinf()
    return hidden.any(dim=(-2, -1)).nonzero().tolist()  # [sequence, head]


right = padding[:, None, None, :]  # (B, 1, 1, L)
wrong = padding[:, None, :]  # (B, 1, L)
print("right, H = 3:", hidden_keys(3, right))
try:
    hidden_keys(3, wrong)
except RuntimeError as error:
    print("wrong, H = 3: RuntimeError:", error)
print("wrong, H = 2:", hidden_keys(2, wrong))
# --8<-- [end:padding_mask]


# --8<-- [start:sum_check]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, H, L = 2, 3, 5
scores = torch.randn(B, H, L, L).to(device)  # (B, H, L, L)
print("B * H * L =", B * H * L)

for dim in (-1, -2):
    weights = torch.softmax(scores, dim=dim)  # (B, H, L, L)
    total = weights.sum().item()
    # the L rows of sequence 0, head 0
    row_sums = [round(s, 2) for s in weights.sum(dim=-1)[0, 0].tolist()]
    print(f"dim={dim}: total {total:.2f}, row sums of head 0: {row_sums}")
# --8<-- [end:sum_check]


# --8<-- [start:batch_check]
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model, H = 2, 5, 12, 3
x = torch.randn(B, L, d_model)  # (B, L, d_model)
y = x.clone()
y[1] = torch.randn(L, d_model)  # a different sample 1; sample 0 unchanged
x, y = x.to(device), y.to(device)


def sample_0_change(mha):
    """How far sample 0's output moves when only sample 1 changes."""
    out_x, _ = mha(x, x, x)
    out_y, _ = mha(y, y, y)
    return (out_x[0] - out_y[0]).abs().max().item()


for batch_first in (False, True):
    torch.manual_seed(1)
    mha = nn.MultiheadAttention(d_model, H, batch_first=batch_first)
    mha = mha.to(device)
    change = sample_0_change(mha)
    print(f"batch_first={batch_first}: output 0 changed by {change:.2f}")
# --8<-- [end:batch_check]
