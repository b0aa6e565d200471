"""A residual connection keeps the input reachable: out - sublayer(x) is x."""

# --8<-- [start:residual]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model = 4, 8
x = torch.randn(L, d_model).to(device)  # (L, d_model)
sublayer = nn.Linear(d_model, d_model).to(device)  # attention or the MLP

out = x + sublayer(x)  # (L, d_model): the residual connection

# a sublayer that outputs zeros: the block passes x through unchanged,
# and the gradient still reaches x
nn.init.zeros_(sublayer.weight)
nn.init.zeros_(sublayer.bias)
x.requires_grad_(True)
out = x + sublayer(x)  # (L, d_model)
print("max |out - x|:", (out - x).abs().max().item())
out.sum().backward()
print(x.grad[0].cpu())  # d out.sum() / d x: 1 through the identity path
# --8<-- [end:residual]
