"""Chapter 6's exercises: a head that looks back, untrained rows, RoPE pairing.

Each section runs alone in a fresh Python: it imports what it uses.
"""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:look_back]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

L, d_model, k = 64, 32, 3
pos = torch.arange(L, device=device, dtype=torch.float32)  # (L,)
omega = 10000.0 ** (-torch.arange(0, d_model, 2, device=device) / d_model)
angle = pos[:, None] * omega  # (L, d_model/2)
pe = torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(-2)  # sin, cos

# M_k of section 6.2: one 2x2 rotation by k ω_p per pair p
c, s = torch.cos(k * omega), torch.sin(k * omega)  # 2 × (d_model/2,)
blocks = torch.stack([torch.stack([c, s], -1), torch.stack([-s, c], -1)], -2)
M = torch.block_diag(*blocks)  # (d_model, d_model): PE(pos + k) = M @ PE(pos)

W_Q = torch.eye(d_model, device=device)
W_K = M.T  # row j of pe @ W_K is PE(j + 3)
scores = (pe @ W_Q) @ (pe @ W_K).T  # (L, L): PE(i) · PE(j + 3)
i = torch.arange(k, L, device=device)
print(
    "every query i >= 3 peaks at key i - 3:",
    torch.equal(scores[k:].argmax(dim=-1), i - k),
)
before = scores[10, 7].round(decimals=3).item()
after = scores[10, 13].round(decimals=3).item()
print(f"query 10: key 7 scores {before:.3f}, key 13 scores {after:.3f}")
# --8<-- [end:look_back]

# --8<-- [start:weight_decay]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
max_len, d_model, train_len = 512, 64, 8
pos_table = nn.Embedding(max_len, d_model).to(device)
start = pos_table.weight.detach().clone()  # (max_len, d_model): initial values
lr, weight_decay, steps = 0.01, 0.1, 20
opt = torch.optim.AdamW(
    pos_table.parameters(), lr=lr, weight_decay=weight_decay
)
for _ in range(steps):  # every training sequence has 8 tokens
    x = torch.randn(4, train_len, d_model).to(device)  # (4, train_len, d_model)
    positions = pos_table(torch.arange(train_len, device=device))
    loss = (x + positions).pow(2).mean()  # any loss will do
    opt.zero_grad()
    loss.backward()
    opt.step()

weight = pos_table.weight.detach()
shrink = (1 - lr * weight_decay) ** steps
unseen = torch.allclose(
    weight[train_len:], start[train_len:] * shrink, rtol=1e-5, atol=1e-6
)
print(f"rows 8-511 == initial values x {shrink:.4f}:", unseen)
only_shrunk = torch.allclose(weight[:train_len], start[:train_len] * shrink)
print("rows 0-7 only shrunk as well:", only_shrunk)
# --8<-- [end:weight_decay]

# --8<-- [start:convert_pairing]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def rope_angles(L, d_k, device):
    """Angle i θ_p for positions i = 0 .. L-1 and pairs p: (L, d_k/2)."""
    theta = 10000.0 ** (-torch.arange(0, d_k, 2, device=device) / d_k)
    return torch.arange(L, device=device)[:, None] * theta


def rope(x):
    """Interleaved pairs (x_2p, x_2p+1), as on this page: x (..., L, d_k)."""
    a = rope_angles(x.shape[-2], x.shape[-1], x.device)
    cos, sin = a.cos(), a.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2)


def rope_half(x):
    """Pairs (x_p, x_p+d_k/2): first half with second half."""
    a = rope_angles(x.shape[-2], x.shape[-1], x.device)
    cos, sin = a.cos(), a.sin()
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


torch.manual_seed(0)
L, d_model, H = 6, 16, 2
d_k = d_model // H
X = torch.randn(L, d_model).to(device)  # (L, d_model)
# W_Q, W_K (d_model, d_model), Q = X @ W_Q: trained with half-split RoPE
W_Q, W_K = (
    torch.randn(d_model, d_model).to(device) / d_model**0.5 for _ in range(2)
)  # 2 × (d_model, d_model)


def head_scores(W_Q, W_K, rotate):
    """Every head's Q K^T after the rotation: (H, L, L)."""
    Q = (X @ W_Q).view(L, H, d_k).transpose(0, 1)  # (H, L, d_k)
    K = (X @ W_K).view(L, H, d_k).transpose(0, 1)  # (H, L, d_k)
    return rotate(Q) @ rotate(K).transpose(-2, -1)


# within each head: 0, 4, 1, 5, 2, 6, 3, 7; then the same for head 1
order = torch.arange(d_model).view(H, 2, d_k // 2).transpose(1, 2).flatten()
order = order.to(device)
print("order:", order.tolist())
target = head_scores(W_Q, W_K, rope_half)  # (H, L, L): as trained
by_columns = head_scores(W_Q[:, order], W_K[:, order], rope)  # (H, L, L)
by_rows = head_scores(W_Q[order], W_K[order], rope)
print("columns reordered:", torch.allclose(by_columns, target, atol=1e-4))
print("rows reordered:", torch.allclose(by_rows, target, atol=1e-4))
# --8<-- [end:convert_pairing]
