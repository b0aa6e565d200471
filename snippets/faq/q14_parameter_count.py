"""Q14: parameters of nn.MultiheadAttention(512, 8), with and without bias."""

# --8<-- [start:count]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

d_model = 512
for bias in [True, False]:
    mha = nn.MultiheadAttention(d_model, num_heads=8, bias=bias).to(device)
    n_params = sum(p.numel() for p in mha.parameters())
    print(f"bias={bias}: {n_params:,} parameters")
    for name, p in mha.named_parameters():
        print(f"    {name:<16} {tuple(p.shape)}")
print(f"4 * d_model**2 = {4 * d_model**2:,},  4 * d_model = {4 * d_model:,}")
# --8<-- [end:count]
