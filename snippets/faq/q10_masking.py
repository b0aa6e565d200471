"""Q10: -inf or -1e9, fully masked rows, float16, two boolean conventions."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:inf_or_big]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
scores = torch.randn(4, 4).to(device)
blocked = torch.ones(4, 4, dtype=torch.bool, device=device).triu(1)  # future
blocked[3] = True  # pretend the last query may see nothing at all

with_inf = torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)
with_big = torch.softmax(scores.masked_fill(blocked, -1e9), dim=-1)
print("rows 0-2 agree:", torch.allclose(with_inf[:3], with_big[:3]))
print("row 3 with -inf:", with_inf[3].cpu())
print("row 3 with -1e9:", with_big[3].cpu())
# --8<-- [end:inf_or_big]

# --8<-- [start:float16]
half = scores.half()
try:
    half.masked_fill(blocked, -1e9)  # -1e9 does not fit in float16 (max 65504)
except RuntimeError as error:
    print("float16 with -1e9:", type(error).__name__, "overflow" in str(error))
for value in [float("-inf"), torch.finfo(torch.float16).min]:
    weights = torch.softmax(half.masked_fill(blocked, value).float(), dim=-1)
    agree = torch.allclose(weights[:3], with_inf[:3], atol=1e-3)
    print(f"float16 with {value}: rows 0-2 agree:", agree)
# --8<-- [end:float16]

# --8<-- [start:conventions]
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, E = 4, 8
x = torch.randn(1, L, E).to(device)
causal = torch.ones(
    L, L, dtype=torch.bool, device=device
).tril()  # True on and below diagonal


def show(title, weights):  # 1 where query (row) gives weight to key (column)
    if weights.ndim != 2:
        raise ValueError(f"weights must be (L, S), got {tuple(weights.shape)}")
    gives = (weights > 0).int().tolist()  # compared on the device
    rows = [" ".join(map(str, row)) for row in gives]
    nan_rows = weights.isnan().all(dim=-1).nonzero().flatten().tolist()
    print(f"{title}: {' | '.join(rows)}   NaN rows: {nan_rows}")


# F.scaled_dot_product_attention: True = may attend.
# With V = identity, the output rows are the attention weights themselves.
eye = torch.eye(L, device=device).expand(1, L, L)
weights = F.scaled_dot_product_attention(x, x, eye, attn_mask=causal)
show("sdpa, mask=causal ", weights[0])

# nn.MultiheadAttention: True = may NOT attend.
mha = nn.MultiheadAttention(E, num_heads=2, batch_first=True).to(device)
show("MHA,  mask=~causal", mha(x, x, x, attn_mask=~causal)[1][0])
# the same mask as for sdpa, given to MHA: the wrong convention
show("MHA,  mask=causal ", mha(x, x, x, attn_mask=causal)[1][0])
# --8<-- [end:conventions]
