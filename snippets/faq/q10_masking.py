"""Q10: PyTorch's two boolean mask conventions, and what the wrong one does."""

# --8<-- [start:conventions]
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model = 4, 8
x = torch.randn(1, L, d_model).to(device)  # (1, L, d_model)
keep = torch.ones(L, L, dtype=torch.bool, device=device).tril()  # True = attend


def show(title, weights):  # 1 where query (row) gives weight to key (column)
    gives = (weights > 0).int().tolist()  # compared on the device
    rows = [" ".join(map(str, row)) for row in gives]
    nan_rows = weights.isnan().all(dim=-1).nonzero().flatten().tolist()
    print(f"{title}: {' | '.join(rows)}   NaN rows: {nan_rows}")


# F.scaled_dot_product_attention: True = may attend.
# With V = identity, the output rows are the attention weights themselves.
eye = torch.eye(L, device=device).expand(1, L, L)  # (1, L, L)
weights = F.scaled_dot_product_attention(x, x, eye, attn_mask=keep)  # (1, L, L)
show("sdpa, mask=keep ", weights[0])

# nn.MultiheadAttention: True = may NOT attend.
mha = nn.MultiheadAttention(d_model, num_heads=2, batch_first=True).to(device)
show("MHA,  mask=~keep", mha(x, x, x, attn_mask=~keep)[1][0])
# the same mask as for sdpa, given to MHA: the wrong convention
show("MHA,  mask=keep ", mha(x, x, x, attn_mask=keep)[1][0])
# --8<-- [end:conventions]
