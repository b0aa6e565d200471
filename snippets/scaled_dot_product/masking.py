"""Padding and causal masks, -inf or -1e9, and two opposite mask conventions."""

# ruff: noqa: E402  (each section imports what it first uses, as the page shows)

# --8<-- [start:imports]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

# --8<-- [end:imports]

# --8<-- [start:padding]
sentences = [["t0", "t1", "t2", "t3"], ["t0", "t1", "<pad>", "<pad>"]]
torch.manual_seed(37)
# batch of 2 sentences, 4 positions each, d_k = d_v = 6
q, k, v = torch.randn(3, 2, 4, 6).to(device)  # 3 × (2, 4, 6)
lengths = torch.tensor([4, 2], device=device)  # (2,): real tokens per sentence
pad = torch.arange(4, device=device) >= lengths[:, None]  # (2, 4): True = pad
print(pad.cpu())

scores = q @ k.transpose(-2, -1) / 6**0.5  # (2, 4, 4)
# pad[:, None, :] is (2, 1, 4): hide the same keys from every query
padded = scores.masked_fill(pad[:, None, :], float("-inf"))  # (2, 4, 4)
pad_weights = torch.softmax(padded, dim=-1)  # (2, 4, 4)
print(pad_weights[1].cpu())
# --8<-- [end:padding]

# --8<-- [start:causal]
# True above the diagonal: position i must not see the positions j > i
ones = torch.ones(4, 4, dtype=torch.bool, device=device)
causal = torch.triu(ones, diagonal=1)  # (4, 4)
print(causal.cpu())
# sentence 1 only
causal_scores = scores[0].masked_fill(causal, float("-inf"))  # (4, 4)
causal_weights = torch.softmax(causal_scores, dim=-1)  # (4, 4)
print(causal_weights.cpu())
# --8<-- [end:causal]

# --8<-- [start:fully_masked]
row = torch.tensor([[0.5, -1.2, 2.0]], device=device)  # (1, 3)
hide_all = torch.ones(1, 3, dtype=torch.bool, device=device)  # every key hidden
print(torch.softmax(row.masked_fill(hide_all, float("-inf")), dim=-1).cpu())
print(torch.softmax(row.masked_fill(hide_all, -1e9), dim=-1).cpu())
# --8<-- [end:fully_masked]

# --8<-- [start:one_key_hidden]
# with a key left to attend to, -1e9 gives the same weights as -inf
hide_first = torch.tensor([[True, False, False]], device=device)
with_inf = torch.softmax(row.masked_fill(hide_first, float("-inf")), dim=-1)
with_big = torch.softmax(row.masked_fill(hide_first, -1e9), dim=-1)
print("key 0 hidden, -inf and -1e9 agree:", torch.allclose(with_inf, with_big))
# --8<-- [end:one_key_hidden]

# --8<-- [start:float16]
# requires torch >= 2.2: float16 softmax on the CPU
half = row.half()  # (1, 3)
hide_one = torch.tensor([[False, True, False]], device=device)
try:
    half.masked_fill(hide_one, -1e9)  # -1e9 is far outside float16's range
except RuntimeError as error:
    print("RuntimeError:", error)
lowest = torch.finfo(half.dtype).min  # the most negative float16
print(lowest)
print(torch.softmax(half.masked_fill(hide_one, lowest), dim=-1).cpu())
# --8<-- [end:float16]

# --8<-- [start:conventions]
import torch.nn.functional as F

# with V the identity, each output row is the row of weights itself
eye = torch.eye(4, device=device).expand(2, 4, 4)  # (2, 4, 4)
as_is = F.scaled_dot_product_attention(q, k, eye, attn_mask=pad[:, None, :])
inverted = F.scaled_dot_product_attention(q, k, eye, attn_mask=~pad[:, None, :])
print(as_is[1].cpu())  # sentence 2: True = may attend, so only <pad> is seen
print(inverted[1].cpu())  # the same weights as pad_weights[1] above
# --8<-- [end:conventions]

# --8<-- [start:is_causal]
future = F.scaled_dot_product_attention(q, k, eye, is_causal=True)  # (2, 4, 4)
print(future[0].cpu())  # sentence 1: the same weights as causal_weights
# --8<-- [end:is_causal]
