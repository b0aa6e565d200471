"""Q12: Table 3, rows (A) of "Attention Is All You Need" as data."""

# --8<-- [start:table3]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

# Vaswani et al. 2017, Table 3: base model and rows (A), English-to-German,
# newstest2013 (development set). d_model = 512 in every row.
TABLE3 = [
    # (row, H, d_k, d_v, PPL (dev), BLEU (dev))
    ("base", 8, 64, 64, 4.92, 25.8),
    ("(A)", 1, 512, 512, 5.29, 24.9),
    ("(A)", 4, 128, 128, 5.00, 25.5),
    ("(A)", 16, 32, 32, 4.91, 25.8),
    ("(A)", 32, 16, 16, 5.01, 25.4),
]
# the paper lists 65M parameters for the base model and no change for rows (A)

rows = sorted(TABLE3, key=lambda r: r[1])  # order by number of heads
bleu = torch.tensor([r[5] for r in rows], device=device)
base_bleu = bleu[[r[0] for r in rows].index("base")]
print("  H   d_k  H*d_k  attention params   PPL   BLEU  vs base")
for (_, H, d_k, _, ppl, _), b in zip(rows, bleu, strict=True):
    mha = nn.MultiheadAttention(512, H, device=device)  # d_k = 512 / H
    n_params = sum(p.numel() for p in mha.parameters())
    delta = (b - base_bleu).item()
    print(f"{H:>3} {d_k:>5} {H * d_k:>6} {n_params:>17,}", end=" ")
    print(f"{ppl:>5.2f} {b:>6.1f} {delta:>+8.1f}")
# --8<-- [end:table3]
