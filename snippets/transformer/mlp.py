"""The MLP of a Transformer block acts on each token alone."""

# --8<-- [start:mlp]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model = 4, 8
x = torch.randn(L, d_model).to(device)  # (L, d_model)
mlp = nn.Sequential(  # widen 4 times, non-linearity, back to d_model
    nn.Linear(d_model, 4 * d_model),
    nn.GELU(),
    nn.Linear(4 * d_model, d_model),
).to(device)
out = mlp(x)  # (L, d_model)

# permuting the tokens permutes the outputs, nothing else
perm = torch.tensor([2, 0, 3, 1]).to(device)
diff = (mlp(x[perm]) - out[perm]).abs().max().item()
print(f"max |mlp(x[perm]) - out[perm]|: {diff:.5f}")

# change token 3 alone: only row 3 of the output changes
x2 = x.clone()
x2[3] += 1.0
change = (mlp(x2) - out).abs().amax(dim=-1)  # (L,): largest change per token
print("largest change per token:", [f"{c:.3f}" for c in change.tolist()])
# --8<-- [end:mlp]
