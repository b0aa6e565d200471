"""The cheat sheet's formula in four steps, with the shape after each."""

# --8<-- [start:steps]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, H, L_q, L_k, d_k, d_v = 2, 4, 3, 5, 8, 6
q = torch.randn(B, H, L_q, d_k).to(device)  # (B, H, L_q, d_k)
k = torch.randn(B, H, L_k, d_k).to(device)  # (B, H, L_k, d_k)
v = torch.randn(B, H, L_k, d_v).to(device)  # (B, H, L_k, d_v)

scores = q @ k.mT  # 1. (B, H, L_q, d_k) @ (B, H, d_k, L_k) -> (B, H, L_q, L_k)
scores = scores / d_k**0.5  # 2. scale
weights = torch.softmax(scores, dim=-1)  # 3. (B, H, L_q, L_k), rows sum to 1
out = weights @ v  # 4. (B, H, L_q, L_k) @ (B, H, L_k, d_v) -> (B, H, L_q, d_v)

for name, t in dict(q=q, k=k, v=v, weights=weights, out=out).items():
    print(f"{name:8}", tuple(t.shape))
diff = (out - F.scaled_dot_product_attention(q, k, v)).abs().max().item()
print(f"max |out - F.scaled_dot_product_attention|: {diff:.6f}")
# --8<-- [end:steps]
