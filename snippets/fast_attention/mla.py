"""Multi-head latent attention: a cache of one latent per token, no K or V."""

# --8<-- [start:mla]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model, H, d_k, d_c, d_r = 3, 10, 128, 8, 16, 24, 4
x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)


def weight(n_in, n_out):
    return torch.randn(n_in, n_out).to(device) / n_in**0.5


w_q, w_qr = weight(d_model, H * d_k), weight(d_model, H * d_r)
w_dkv, w_kr = weight(d_model, d_c), weight(d_model, d_r)  # down
w_uk, w_uv = weight(d_c, H * d_k), weight(d_c, H * d_k)  # up, per head

# the cache: one latent c and one small shared key per token, no K or V
c = x @ w_dkv  # (B, L, d_c)
k_r = (x @ w_kr)[:, None]  # (B, 1, L, d_r): the key that carries RoPE
real = c.numel() * c.element_size() + k_r.numel() * k_r.element_size()
formula = B * L * (d_c + d_r) * 4  # float32: 4 bytes a number
print(f"cache {real:,} bytes, formula B x L x (d_c + d_r) x 4 = {formula:,}")


def heads(t, width):  # (B, L, H * width) -> (B, H, L, width)
    return t.view(B, L, H, width).transpose(1, 2)


q, q_r = heads(x @ w_q, d_k), heads(x @ w_qr, d_r)
# (1) expand the latent back into K and V, then ordinary attention
K = heads(c @ w_uk, d_k)  # (B, H, L, d_k)
V = heads(c @ w_uv, d_k)  # (B, H, L, d_k)
out = F.scaled_dot_product_attention(
    torch.cat([q, q_r], dim=-1),  # scores: q kᵀ + q_r k_rᵀ
    torch.cat([K, k_r.expand(B, H, L, d_r)], dim=-1),
    V,
)  # scaled by 1 / √(d_k + d_r)

# (2) never build K or V: fold w_uk into the query, w_uv into the output
w_uk_h = w_uk.view(d_c, H, d_k).transpose(0, 1)  # (H, d_c, d_k)
w_uv_h = w_uv.view(d_c, H, d_k).transpose(0, 1)  # (H, d_c, d_k)
q_c = q @ w_uk_h.transpose(-2, -1)  # (B, H, L, d_c): a query for c
scores = q_c @ c[:, None].transpose(-2, -1) + q_r @ k_r.transpose(-2, -1)
weights = torch.softmax(scores / (d_k + d_r) ** 0.5, dim=-1)  # (B, H, L, L)
folded = (weights @ c[:, None]) @ w_uv_h  # (B, H, L, d_k)
diff = (folded - out).abs().max()
print(f"max |read from the latent - expanded K, V| = {diff:.6f}")
# --8<-- [end:mla]
