"""nn.MultiheadAttention reads (L, B, E) unless batch_first=True, silently."""

# --8<-- [start:wrong_layout]
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, E, H = 2, 5, 12, 3
x = torch.randn(B, L, E).to(device)  # (B, L, E)

# batch_first=False by default: the module reads x as (L, B, E)
mha = nn.MultiheadAttention(E, H).to(device)
out, weights = mha(x, x, x)
print("out", tuple(out.shape), "weights", tuple(weights.shape))
# --8<-- [end:wrong_layout]

# --8<-- [start:fix]
fixed = nn.MultiheadAttention(E, H, batch_first=True).to(device)
fixed.load_state_dict(mha.state_dict())  # the same weights
out_fixed, weights_fixed = fixed(x, x, x)
print("out", tuple(out_fixed.shape), "weights", tuple(weights_fixed.shape))
print("same as the output above:", torch.allclose(out, out_fixed))

# the default layout works too, if x is given as (L, B, E)
x_lbe = x.transpose(0, 1)
out_lbe, _ = mha(x_lbe, x_lbe, x_lbe)
torch.testing.assert_close(out_lbe.transpose(0, 1), out_fixed)
print("(L, B, E) input matches batch_first=True")
# --8<-- [end:fix]
