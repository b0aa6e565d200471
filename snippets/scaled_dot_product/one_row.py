"""One row of scores as d_k grows, with and without 1/√d_k: the slider."""

# --8<-- [start:one_row]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

g = torch.Generator().manual_seed(0)
n_keys, widest = 8, 1024
# one query and 8 keys, entries with mean 0 and variance 1;
# at each d_k they keep their first d_k entries
q = torch.randn(widest, generator=g).to(device)  # (widest,)
k = torch.randn(n_keys, widest, generator=g).to(device)  # (n_keys, widest)
d_ks = [2**i for i in range(11)]  # 1, 2, 4, ..., 1024
raw, scaled = {}, {}
for d_k in d_ks:
    scores = k[:, :d_k] @ q[:d_k]  # (n_keys,): one row of scores
    raw[d_k] = torch.softmax(scores, dim=-1)  # (n_keys,)
    scaled[d_k] = torch.softmax(scores / d_k**0.5, dim=-1)  # (n_keys,)
    print(
        f"d_k={d_k:4d}  max weight: raw {raw[d_k].max():.3f}"
        f"  scaled {scaled[d_k].max():.3f}"
    )
# --8<-- [end:one_row]
