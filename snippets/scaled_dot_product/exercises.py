"""Chapter 3's exercises: dividing by d_k; a softmax that gives masked rows 0;
a padding mask and a causal mask together."""

# ruff: noqa: E402  (each section imports what it uses: every block runs alone)

# --8<-- [start:divide_by_d_k]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

g = torch.Generator().manual_seed(0)
n_keys = 16  # uniform weights would be 1/16 = 0.0625
print(" d_k  std of scores: /√d_k  /d_k  max weight: /√d_k   /d_k")
for d_k in (4, 64, 1024):
    q = torch.randn(256, 1, d_k, generator=g).to(device)  # (256, 1, d_k)
    k = torch.randn(256, n_keys, d_k, generator=g).to(device)  # (256, 16, d_k)
    dots = (q * k).sum(dim=-1)  # (256, 16): each query against its keys
    stds, tops = [], []
    for scores in (dots / d_k**0.5, dots / d_k):
        weights = torch.softmax(scores, dim=-1)  # (256, 16)
        stds.append(scores.std().item())
        tops.append(weights.max(dim=-1).values.mean().item())
    print(
        f"{d_k:4d}  {stds[0]:20.2f}  {stds[1]:4.2f}"
        f"  {tops[0]:17.3f}  {tops[1]:5.3f}"
    )
# --8<-- [end:divide_by_d_k]

# --8<-- [start:masked_softmax]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def masked_softmax(scores, hide):
    """Softmax over the last dimension; hidden (True) keys get weight 0.

    A row whose keys are all hidden gets 0 everywhere instead of NaN.
    """
    weights = torch.softmax(scores.masked_fill(hide, float("-inf")), dim=-1)
    no_key = hide.all(dim=-1, keepdim=True)  # rows with nothing to attend to
    return weights.masked_fill(no_key, 0.0)


scores = torch.tensor([[0.5, -1.2, 2.0], [0.5, -1.2, 2.0]], device=device)
hide = torch.tensor([[True, True, True], [True, False, False]], device=device)
weights = masked_softmax(scores, hide)  # (2, 3)
print(weights.cpu())
visible = torch.softmax(scores[1, 1:], dim=-1)  # (2,): row 1 without key 0
print(visible.cpu())
# --8<-- [end:masked_softmax]

# --8<-- [start:combined_mask]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_k = 2, 4, 6
q, k = torch.randn(2, B, L, d_k).to(device)  # 2 × (B, L, d_k)
pad = torch.tensor([[False] * 4, [False, False, True, True]], device=device)
ones = torch.ones(L, L, dtype=torch.bool, device=device)
causal = torch.triu(ones, diagonal=1)  # (L, L): True = the future

# one mask for F.scaled_dot_product_attention: True = may attend
keep = ~(pad[:, None, :] | causal)  # (B, 1, L) | (L, L) -> (B, L, L)
print(keep.shape)
eye = torch.eye(L, device=device).expand(B, L, L)  # V = I: output = weights
weights = F.scaled_dot_product_attention(q, k, eye, attn_mask=keep)
print(weights[1].cpu())

# by hand, as in 3.8: hide the padding, then the future (True = hidden)
scores = q @ k.transpose(-2, -1) / d_k**0.5  # (B, L, L)
scores = scores.masked_fill(pad[:, None, :], float("-inf"))
scores = scores.masked_fill(causal, float("-inf"))
print(torch.softmax(scores, dim=-1)[1].cpu())
# --8<-- [end:combined_mask]
