"""Q16: a minimal nn.MultiheadAttention call; batch_first=True vs (L, B, E)."""

# --8<-- [start:minimal]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, E = 2, 5, 16
mha = nn.MultiheadAttention(E, num_heads=4, batch_first=True).to(device)
x = torch.randn(B, L, E).to(device)  # (batch, length, embedding)

out, weights = mha(x, x, x)  # self-attention: query = key = value = x
print("out    :", tuple(out.shape))  # (B, L, E)
print("weights:", tuple(weights.shape))  # (B, L, L), averaged over the heads
# --8<-- [end:minimal]

# --8<-- [start:seq_first]
# without batch_first the layout is (L, B, E): length first
seq_first = nn.MultiheadAttention(E, num_heads=4).to(device)
seq_first.load_state_dict(mha.state_dict())  # same weights as mha

x_lbe = x.transpose(0, 1)  # (L, B, E)
out_lbe, _ = seq_first(x_lbe, x_lbe, x_lbe)
print("out    :", tuple(out_lbe.shape))  # (L, B, E)
same = torch.allclose(out_lbe.transpose(0, 1), out, atol=1e-5)
print("same numbers as batch_first:", same)

# a (B, L, E) tensor runs without error: read as L=2 tokens, B=5 sequences
wrong, _ = seq_first(x, x, x)
same = torch.allclose(wrong, out, atol=1e-5)
print("(B, L, E) given to it:", tuple(wrong.shape), "same numbers:", same)
# --8<-- [end:seq_first]
