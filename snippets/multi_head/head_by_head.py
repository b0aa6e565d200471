"""Multi-head attention written head by head, exactly as the formula reads."""

# --8<-- [start:heads]
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"

L, d_model, H = 5, 8, 2  # 5 tokens, 8 features each, 2 heads
d_k = d_model // H  # each head works in a d_k-dimensional subspace

g = torch.Generator().manual_seed(0)
X = torch.randn(L, d_model, generator=g).to(device)  # (L, d_model)


def param(*shape):
    # drawn on the CPU, so that every device gets the same numbers
    return torch.randn(*shape, generator=g).to(device) / d_model**0.5


# every head has its own three projection matrices, each (d_model, d_k)
W_Q = [param(d_model, d_k) for _ in range(H)]
W_K = [param(d_model, d_k) for _ in range(H)]
W_V = [param(d_model, d_k) for _ in range(H)]
W_O = param(H * d_k, d_model)  # (H·d_k, d_model) = (d_model, d_model)
print("W_i^Q:", tuple(W_Q[0].shape), " W^O:", tuple(W_O.shape))
# --8<-- [end:heads]

# --8<-- [start:per_head]
heads, weights = [], []
for i in range(H):
    # Q_i, K_i and V_i all come straight from X, each through its own matrix
    Q_i, K_i, V_i = X @ W_Q[i], X @ W_K[i], X @ W_V[i]  # 3 × (L, d_k)
    A_i = torch.softmax(Q_i @ K_i.T / d_k**0.5, dim=-1)  # (L, L)
    weights.append(A_i)
    heads.append(A_i @ V_i)  # (L, d_k)

concat = torch.cat(heads, dim=-1)  # (L, H·d_k) = (L, d_model)
output = concat @ W_O  # (L, d_model)
print("head_i:", tuple(heads[0].shape))
print("concat:", tuple(concat.shape))
print("output:", tuple(output.shape))
# --8<-- [end:per_head]

# --8<-- [start:check]
ref = nn.MultiheadAttention(d_model, H, bias=False, device=device)
with torch.no_grad():
    # nn.Linear keeps W transposed: the rows of in_proj_weight are the columns
    # of W_0^Q, W_1^Q, ..., W_0^K, ..., W_0^V, ... in this order
    W_QKV = torch.cat(W_Q + W_K + W_V, dim=1)  # (d_model, 3·d_model)
    ref.in_proj_weight.copy_(W_QKV.T)
    ref.out_proj.weight.copy_(W_O.T)

theirs, their_weights = ref(X, X, X, average_attn_weights=False)
torch.testing.assert_close(output, theirs)
torch.testing.assert_close(torch.stack(weights), their_weights)  # (H, L, L)
print("output and per-head weights match nn.MultiheadAttention")
# --8<-- [end:check]
