"""Chapter 9's exercises: merging two partial results; a rolling KV cache."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:merge]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"


def partial(q, k, v):
    """One chunk of keys: running max m, sum of exp(s - m), weighted sum."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    m = scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores - m)
    return m, p.sum(dim=-1, keepdim=True), p @ v


def merge(a, b):
    """Two partial results into one: rescale both to the larger max."""
    (m_a, total_a, acc_a), (m_b, total_b, acc_b) = a, b
    m = torch.maximum(m_a, m_b)
    scale_a, scale_b = torch.exp(m_a - m), torch.exp(m_b - m)
    total = total_a * scale_a + total_b * scale_b
    return m, total, acc_a * scale_a + acc_b * scale_b


torch.manual_seed(0)
B, H, L_q, L_k, d_k = 2, 4, 1, 40, 16  # one new query, 40 cached keys
q = torch.randn(B, H, L_q, d_k).to(device)  # (B, H, L_q, d_k)
k = torch.randn(B, H, L_k, d_k).to(device)  # (B, H, L_k, d_k)
v = torch.randn(B, H, L_k, d_k).to(device)  # (B, H, L_k, d_k)
first = partial(q, k[:, :, :25], v[:, :, :25])  # keys 0..24
second = partial(q, k[:, :, 25:], v[:, :, 25:])  # keys 25..39
for name, (a, b) in {
    "first, second": (first, second),
    "second, first": (second, first),
}.items():
    m, total, acc = merge(a, b)
    out = acc / total  # (B, H, L_q, d_k)
    ref = F.scaled_dot_product_attention(q, k, v)
    diff = (out - ref).abs().max()
    print(f"merge({name}): max |merged - attention| = {diff:.6f}")
# --8<-- [end:merge]

# --8<-- [start:rolling]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, H, L, W, d_k = 1, 2, 12, 4, 8  # 12 tokens, a window of 4
q = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)
k = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)
v = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)
i = torch.arange(L, device=device)[:, None]  # (L, 1)
j = torch.arange(L, device=device)  # (L,)
sliding = (j <= i) & (i - j < W)  # (L, L)
full = F.scaled_dot_product_attention(q, k, v, attn_mask=sliding)

# generate token by token, keeping only the last W keys and values
diffs = []
for t in range(L):
    k_kept = k[:, :, max(0, t - W + 1) : t + 1]  # at most W tokens
    v_kept = v[:, :, max(0, t - W + 1) : t + 1]
    out = F.scaled_dot_product_attention(q[:, :, t : t + 1], k_kept, v_kept)
    diffs.append((out - full[:, :, t : t + 1]).abs().max())
worst = max(diffs)
print(f"{L} steps, at most {W} tokens kept: max |cached - full| = {worst:.6f}")
# --8<-- [end:rolling]
