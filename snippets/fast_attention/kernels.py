"""Which backends F.scaled_dot_product_attention can use on this device."""

# --8<-- [start:choice]
# requires torch >= 2.3: torch.nn.attention.sdpa_kernel
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
B, H, L, d_k = 1, 4, 256, 64
q, k, v = torch.randn(3, B, H, L, d_k).to(device)  # 3 × (B, H, L, d_k)

default = F.scaled_dot_product_attention(q, k, v)  # (B, H, L, d_k)
with sdpa_kernel(SDPBackend.MATH):  # only the math backend: the formula
    math = F.scaled_dot_product_attention(q, k, v)
diff = (math - default).abs().max()
print(f"math backend: max |math - default| = {diff:.6f}")

fused = [
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.CUDNN_ATTENTION,
]
diffs = []  # one per fused backend that can run here
for backend in fused:
    with sdpa_kernel(backend):  # only this backend is allowed
        try:
            out = F.scaled_dot_product_attention(q, k, v)
        except RuntimeError:  # it cannot take these inputs on this device
            continue
    diffs.append((out - default).abs().max())
print(f"fused backends that ran: max |fused - default| = {max(diffs):.6f}")
# --8<-- [end:choice]
