"""Chapter 4's exercises: one head with the same weights; swapping heads;
cross-attention from in_proj_weight."""

# ruff: noqa: E402
import torch
from torch import nn

from snippets.multi_head.multi_head_attention import (
    MultiHeadAttention,
    device,
)

# as the page's blocks before the exercises left them (sections 4.4 and 4.5)
torch.manual_seed(0)
mha = MultiHeadAttention(12, 3).to(device)
x = torch.randn(2, 5, 12).to(device)
MultiHeadAttention(12, 3)  # the page's robust version draws its weights here
ref = nn.MultiheadAttention(12, 3, batch_first=True)
with torch.no_grad():
    nn.init.normal_(ref.in_proj_bias)
    nn.init.normal_(ref.out_proj.bias)
    mha.in_proj.weight.copy_(ref.in_proj_weight)
    mha.in_proj.bias.copy_(ref.in_proj_bias)
    mha.out_proj.weight.copy_(ref.out_proj.weight)
    mha.out_proj.bias.copy_(ref.out_proj.bias)


# --8<-- [start:one_head]
# mha's parameters (three heads) in a module with one head: same shapes
one = MultiHeadAttention(mha.embed_dim, 1).to(device)
one.load_state_dict(mha.state_dict())

three_heads, one_head = {}, {}
mha(x, trace=three_heads)
one(x, trace=one_head)
for name in ("Q", "K", "V", "output"):
    diff = (three_heads[name] - one_head[name]).abs().max().item()
    print(f"{name:6} 3 heads vs 1: largest difference {diff:.2f}")
print("weights of 3 heads", tuple(three_heads["weights"].shape))
print("weights of 1 head ", tuple(one_head["weights"].shape))

# one head's scores = the three heads' scores added up, divided by √3
summed = three_heads["scores"].sum(dim=1) / 3**0.5  # (B, L, L)
diff = (one_head["scores"][:, 0] - summed).abs().max().item()
print(f"one head's scores - (sum of three) / √3: {diff:.4f}")
# --8<-- [end:one_head]


# --8<-- [start:swap]
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
d_model, H = 12, 3
d_k = d_model // H
ref = nn.MultiheadAttention(d_model, H, batch_first=True)
with torch.no_grad():  # random biases, so that they are moved too
    nn.init.normal_(ref.in_proj_bias)
    nn.init.normal_(ref.out_proj.bias)
ref = ref.to(device)
x = torch.randn(2, 5, d_model).to(device)  # (2, 5, d_model)

order = [2, 1, 0]  # new head i is old head order[i]: swap heads 0 and 2
block = torch.cat([torch.arange(i * d_k, (i + 1) * d_k) for i in order])
# the same rows in the Q, K and V parts
rows = torch.cat([block, d_model + block, 2 * d_model + block])  # (3·d_model,)
block, rows = block.to(device), rows.to(device)


def swapped(move_w_o=True):
    """A copy of ref with its heads in the new order."""
    new = nn.MultiheadAttention(d_model, H, batch_first=True)
    new = new.to(device)
    new.load_state_dict(ref.state_dict())
    with torch.no_grad():
        new.in_proj_weight.copy_(ref.in_proj_weight[rows])  # W^Q, W^K, W^V
        new.in_proj_bias.copy_(ref.in_proj_bias[rows])
        if move_w_o:  # W^O's rows are the columns of out_proj.weight
            new.out_proj.weight.copy_(ref.out_proj.weight[:, block])
    return new


out, weights = ref(x, x, x, average_attn_weights=False)
new_out, new_weights = swapped()(x, x, x, average_attn_weights=False)
diff = (new_out - out).abs().max().item()
print(f"output changed by {diff:.4f}")
same = torch.allclose(new_weights, weights[:, order], atol=1e-6)
print("new head i's weights are old head order[i]'s:", same)
stale_w_o, _ = swapped(move_w_o=False)(x, x, x)
diff = (stale_w_o - out).abs().max().item()
print(f"output changed by {diff:.4f} if W^O is not moved")
# --8<-- [end:swap]


# --8<-- [start:cross]
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
d_model, H = 12, 3
d_k = d_model // H
ref = nn.MultiheadAttention(d_model, H, batch_first=True)
with torch.no_grad():  # random biases, so that the check covers them
    nn.init.normal_(ref.in_proj_bias)
    nn.init.normal_(ref.out_proj.bias)
ref = ref.to(device)
x = torch.randn(2, 5, d_model).to(device)  # (B, L_q, d_model): queries
memory = torch.randn(2, 7, d_model).to(device)  # (B, L_k, d_model): keys/values

w_q, w_k, w_v = ref.in_proj_weight.chunk(3)  # (out, in) = (d_model, d_model)
b_q, b_k, b_v = ref.in_proj_bias.chunk(3)
Q = x @ w_q.T + b_q  # (B, L_q, d_model): from x
K = memory @ w_k.T + b_k  # (B, L_k, d_model): from memory ...
V = memory @ w_v.T + b_v  # (B, L_k, d_model): ... and so are the values


def split_heads(t):
    """(B, L, d_model) -> (B, H, L, d_k), for any L."""
    B, L, _ = t.shape
    return t.view(B, L, H, d_k).transpose(1, 2)


Q_h, K_h, V_h = map(split_heads, (Q, K, V))
weights = torch.softmax(Q_h @ K_h.mT / d_k**0.5, dim=-1)  # (B, H, L_q, L_k)
merged = (weights @ V_h).transpose(1, 2).reshape(x.shape)  # (B, L_q, d_model)
out = ref.out_proj(merged)  # (B, L_q, d_model): W^O

theirs, their_weights = ref(x, memory, memory, average_attn_weights=False)
torch.testing.assert_close(out, theirs)
torch.testing.assert_close(weights, their_weights)
print("weights", tuple(weights.shape), " out", tuple(out.shape))
print("match nn.MultiheadAttention(x, memory, memory)")
# --8<-- [end:cross]
