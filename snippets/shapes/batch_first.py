"""nn.MultiheadAttention reads (L, B, d_model) unless batch_first=True."""

# --8<-- [start:wrong_layout]
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model, H = 2, 5, 12, 3
x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)

# batch_first=False by default: the module reads x as (L, B, d_model)
mha = nn.MultiheadAttention(d_model, H).to(device)
out, weights = mha(x, x, x)
print("out", tuple(out.shape), "weights", tuple(weights.shape))
# --8<-- [end:wrong_layout]

# --8<-- [start:fix]
fixed = nn.MultiheadAttention(d_model, H, batch_first=True).to(device)
fixed.load_state_dict(mha.state_dict())  # the same weights
out_fixed, weights_fixed = fixed(x, x, x)
print("out", tuple(out_fixed.shape), "weights", tuple(weights_fixed.shape))
diff = (out - out_fixed).abs().max().item()
print(f"largest difference from the output above: {diff:.2f}")

# the default layout works too, if x is given as (L, B, d_model)
x_lbe = x.transpose(0, 1)  # (L, B, d_model)
out_lbe, _ = mha(x_lbe, x_lbe, x_lbe)
torch.testing.assert_close(out_lbe.transpose(0, 1), out_fixed)
print("(L, B, d_model) input matches batch_first=True")
# --8<-- [end:fix]
