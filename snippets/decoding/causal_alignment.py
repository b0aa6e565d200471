"""is_causal=True aligns the mask to the top left when L_q != L_k: the trap."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:trap]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L_k, L_q, d_k = 7, 3, 8  # 7 keys: 4 cached tokens + 3 new; 3 new queries
q_all, k, v = (torch.randn(1, 1, L_k, d_k).to(device) for _ in range(3))
q = q_all[:, :, -L_q:]  # (1, 1, L_q, d_k): only the 3 new tokens ask

# the right answer: all 7 tokens with the usual causal mask, last 3 rows
reference = F.scaled_dot_product_attention(q_all, k, v, is_causal=True)
reference = reference[:, :, -L_q:]  # (1, 1, L_q, d_k)


def seen(**mask):
    """1 where a query gives weight to a key: values = identity matrix."""
    eye = torch.eye(L_k, device=device).expand(1, 1, L_k, L_k)
    weights = F.scaled_dot_product_attention(q, k, eye, **mask)[0, 0]
    for i, row in enumerate((weights > 0).int().tolist()):
        print(f"  query {L_k - L_q + i}: " + " ".join(map(str, row)))


out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print("is_causal=True matches:", torch.allclose(out, reference, atol=1e-5))
seen(is_causal=True)
# --8<-- [end:trap]

# --8<-- [start:explicit]
# True = may attend; the diagonal moved right by L_k - L_q: bottom right
allowed = torch.ones(L_q, L_k, dtype=torch.bool, device=device)  # (L_q, L_k)
allowed = allowed.tril(L_k - L_q)  # (L_q, L_k)
out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
print("explicit mask matches:", torch.allclose(out, reference, atol=1e-5))
seen(attn_mask=allowed)
# --8<-- [end:explicit]

# --8<-- [start:lower_right]
# requires torch >= 2.3: torch.nn.attention.bias
from torch.nn.attention.bias import causal_lower_right, causal_upper_left

out = F.scaled_dot_product_attention(
    q, k, v, attn_mask=causal_lower_right(L_q, L_k)
)  # (1, 1, L_q, d_k)
print("causal_lower_right matches:", torch.allclose(out, reference, atol=1e-5))
upper = F.scaled_dot_product_attention(
    q, k, v, attn_mask=causal_upper_left(L_q, L_k)
)
trap = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print(
    "causal_upper_left == is_causal=True:",
    torch.allclose(upper, trap, atol=1e-5),
)
# --8<-- [end:lower_right]

# the figure: the two masks
upper_left = torch.ones(L_q, L_k, dtype=torch.bool).tril()
lower_right = torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q)
