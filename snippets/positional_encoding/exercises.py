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

shrink = (1 - lr * weight_decay) ** steps
print(f"(1 - lr * weight_decay) ** steps = {shrink:.4f}")
# what the decay alone does not explain: (max_len, d_model)
rest = (pos_table.weight.detach() - start * shrink).abs()
unseen, seen = rest[train_len:].max(), rest[:train_len].max()
print(f"rows 8-511, largest change besides the decay: {unseen:.4f}")
print(f"rows 0-7, largest change besides the decay: {seen:.4f}")
# --8<-- [end:weight_decay]
