"""Q11: H heads give H separate attention maps for the same parameter count."""

# --8<-- [start:patterns]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
x = torch.randn(1, 6, 64).to(device)  # (1, 6, 64): 6 tokens, d_model = 64
for H in [1, 8]:
    mha = nn.MultiheadAttention(64, num_heads=H, batch_first=True).to(device)
    _, maps = mha(x, x, x, average_attn_weights=False)  # one map per head
    n_params = sum(p.numel() for p in mha.parameters())
    print(f"H={H}: maps {tuple(maps.shape)}, parameters {n_params:,}")

# the 8 maps are 8 different ways of spreading attention over the same tokens
different = [not torch.allclose(maps[0, 0], maps[0, i]) for i in range(1, 8)]
print("head 0 differs from heads 1-7:", all(different))
# --8<-- [end:patterns]
