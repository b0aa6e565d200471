"""LayerNorm: each token's vector rescaled to mean 0 and variance 1."""

# --8<-- [start:layer_norm]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model = 3, 8
x = torch.randn(L, d_model).to(device) * 5 + 3  # (L, d_model), large values
print("before, mean:", x.mean(dim=-1).round(decimals=2).cpu())

# per token (row): subtract its mean, divide by its standard deviation
mean = x.mean(dim=-1, keepdim=True)  # (L, 1)
var = x.var(dim=-1, unbiased=False, keepdim=True)  # (L, 1)
y = (x - mean) / torch.sqrt(var + 1e-5)  # (L, d_model)
print("after, mean:", y.mean(dim=-1).abs().round(decimals=4).cpu())
print("after, variance:", y.var(dim=-1, unbiased=False).round(decimals=3).cpu())

norm = nn.LayerNorm(d_model).to(device)  # also learns a scale and a shift
# its scale and shift start at 1 and 0: the same numbers as by hand
diff = (norm(x) - y).abs().max().item()
print(f"max |nn.LayerNorm - by hand|: {diff:.5f}")
# --8<-- [end:layer_norm]
