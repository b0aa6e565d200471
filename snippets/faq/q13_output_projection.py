"""Q13: without W^O each head keeps to its own columns; W^O mixes the heads."""

# --8<-- [start:mixing]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, n, h, d_v = 1, 5, 4, 2
d_model = h * d_v
Q, K, V = torch.randn(3, B, h, n, d_v).to(device)
W_o = torch.randn(d_model, d_model).to(device)


def concat_heads(Q, K, V):  # (B, h, n, d_v) -> (B, n, h * d_v)
    if Q.ndim != 4:
        raise ValueError(
            f"expected (B, h, n, d) tensors, got Q {tuple(Q.shape)}"
        )
    heads = F.scaled_dot_product_attention(Q, K, V)  # (B, h, n, d_v)
    return heads.transpose(1, 2).reshape(B, n, -1)


V2 = V.clone()
V2[:, 0] += 1.0  # change what head 0 sees, and nothing else
before, after = concat_heads(Q, K, V), concat_heads(Q, K, V2)

changed = (before - after).abs().amax(dim=(0, 1)) > 1e-6  # per output column
print("concat only: columns changed", changed.int().tolist())
changed = (before @ W_o - after @ W_o).abs().amax(dim=(0, 1)) > 1e-6
print("after W^O:   columns changed", changed.int().tolist())
# --8<-- [end:mixing]
