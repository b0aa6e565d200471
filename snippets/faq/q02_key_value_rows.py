"""Q2: keys and values need the same rows in the same order, not one source."""

# --8<-- [start:rows]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

g = torch.Generator().manual_seed(0)
q = torch.randn(3, 4, generator=g).to(device)  # (3, 4): 3 queries
k = torch.randn(7, 4, generator=g).to(device)  # (7, 4): 7 keys
v = torch.randn(7, 5, generator=g).to(device)  # (7, 5): made independently
out = F.scaled_dot_product_attention(q, k, v)  # (3, 5)
print("K (7, 4) and V (7, 5) -> output", tuple(out.shape))

shuffle = torch.randperm(7, generator=g).to(device)
both = F.scaled_dot_product_attention(q, k[shuffle], v[shuffle])
only_v = F.scaled_dot_product_attention(q, k, v[shuffle])
together = torch.allclose(both, out, atol=1e-5)
alone = torch.allclose(only_v, out, atol=1e-5)
print("rows of K and V shuffled together, same output:", together)
print("rows of V shuffled alone, same output:         ", alone)
# --8<-- [end:rows]
