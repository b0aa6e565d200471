"""Q7: d_k = d_model / H: H heads cost as much as one full-width head."""

# --8<-- [start:cost]
import torch
from torch.utils.flop_counter import FlopCounterMode

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model = 128, 512
X = torch.randn(1, L, d_model).to(device)  # (1, L, d_model)

flops = {}
for H, d_k in [(1, 512), (8, 64), (8, 16)]:
    W_Q, W_K, W_V = torch.randn(3, d_model, H * d_k).to(device)
    W_O = torch.randn(H * d_k, d_model).to(device)  # (H·d_k, d_model)
    with FlopCounterMode(display=False) as counter:
        # project, split into H heads of width d_k: (1, H, L, d_k)
        heads = [
            (X @ W).view(1, L, H, d_k).transpose(1, 2) for W in (W_Q, W_K, W_V)
        ]
        Q, K, V = heads  # 3 × (1, H, L, d_k)
        A = torch.softmax(Q @ K.transpose(-2, -1) / d_k**0.5, dim=-1)
        out = (A @ V).transpose(1, 2).reshape(1, L, H * d_k) @ W_O
    flops[H, d_k] = counter.get_total_flops()
    print(f"H={H}  d_k={d_k:>3}  H*d_k={H * d_k:>3}  FLOPs={flops[H, d_k]:,}")
# --8<-- [end:cost]

# --8<-- [start:widths]
# q and k must have the same width (a dot product); v may be wider or narrower
q = torch.randn(1, 8, 5, 16).to(device)
k = torch.randn(1, 8, 5, 16).to(device)
v = torch.randn(1, 8, 5, 40).to(device)
out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
print("d_k = 16, d_v = 40 ->", tuple(out.shape))
# --8<-- [end:widths]
