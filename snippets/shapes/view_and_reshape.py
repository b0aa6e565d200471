"""view after transpose: which merges fail; a wrong split or merge is silent."""

# --8<-- [start:view]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

B, H, L, d_k = 2, 3, 5, 4
heads = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k): one per head
t = heads.transpose(1, 2)  # (B, L, H, d_k): same memory, read in another order
print("heads", tuple(heads.shape), heads.stride(), heads.is_contiguous())
print("t    ", tuple(t.shape), t.stride(), t.is_contiguous())

try:
    t.view(B, L, H * d_k)
except RuntimeError as error:
    print("RuntimeError:", error)

merged = t.reshape(B, L, H * d_k)  # (B, L, H·d_k): copies when it has to
also_merged = t.contiguous().view(B, L, H * d_k)  # copy first, then view
same = torch.equal(merged, also_merged)
print("merged", tuple(merged.shape), "both fixes agree:", same)
# --8<-- [end:view]

# --8<-- [start:view_ok]
# splitting a dimension always works, even on the transposed t
print("t split", tuple(t.view(B, L, H, 2, d_k // 2).shape))

# merging works where two neighbours still follow each other in memory:
# stride of the outer == stride of the inner * size of the inner
ht = heads.transpose(-2, -1)  # (B, H, d_k, L): only the last two swapped
print("ht     ", tuple(ht.shape), ht.stride(), ht.is_contiguous())
folded = ht.view(B * H, d_k, L)  # (B·H, d_k, L): B and H, 60 == 20 * 3
same_memory = folded.data_ptr() == ht.data_ptr()
print("folded ", tuple(folded.shape), "no copy:", same_memory)
# --8<-- [end:view_ok]

# --8<-- [start:split]
L, d_model, H = 3, 4, 2
d_k = d_model // H
# token i holds the numbers 4i ... 4i + 3
x = torch.arange(L * d_model).reshape(1, L, d_model).to(device)
print(x[0].cpu())

right = x.view(1, L, H, d_k).transpose(1, 2)  # (1, 2, 3, 2): (1, H, L, d_k)
wrong = x.view(1, H, L, d_k)  # (1, 2, 3, 2): same shape, other numbers
print("right, head 0:", right[0, 0].tolist())
print("wrong, head 0:", wrong[0, 0].tolist())
print("same numbers: ", torch.equal(right, wrong))
# --8<-- [end:split]

# --8<-- [start:merge]
# (1, H, L, d_k) -> (1, L, H, d_k) -> (1, L, d_model)
merged_right = right.transpose(1, 2).reshape(1, L, d_model)  # (1, L, d_model)
# skipping the transpose raises no error either
merged_wrong = right.reshape(1, L, d_model)  # (1, L, d_model)
print("right merge gives x back:", torch.equal(merged_right, x))
print("wrong merge gives x back:", torch.equal(merged_wrong, x))
# --8<-- [end:merge]
