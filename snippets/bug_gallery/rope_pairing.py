"""Bug: weights laid out for half-split RoPE, rotated with interleaved pairs.

Fixed in NeuraLegion/shainet, pull request #111, and in warpfront/hipfire,
pull request #241.
"""

# --8<-- [start:bug]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_k = 6, 8
pos = torch.arange(L, device=device)  # (L,)
theta = 10000.0 ** (-torch.arange(0, d_k, 2, device=device) / d_k)  # (d_k/2,)
angle = pos[:, None] * theta  # (L, d_k / 2): one angle per pair p
cos, sin = angle.cos(), angle.sin()  # 2 × (L, d_k/2)


def rope_half_split(x):  # pairs (p, p + d_k / 2), as rotate_half does
    x1, x2 = x[..., : d_k // 2], x[..., d_k // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def rope_interleaved(x):  # pairs (2p, 2p + 1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2)


# q and k as the checkpoint's weights produce them: half-split layout
q, k = (torch.randn(L, d_k).to(device) for _ in range(2))  # 2 × (L, d_k)
# the model was trained with half-split RoPE: these are the right scores
scores_trained = rope_half_split(q) @ rope_half_split(k).T  # (L, L)


def scores_buggy(q, k):
    return rope_interleaved(q) @ rope_interleaved(k).T  # bug: other pairs


# --8<-- [end:bug]


# --8<-- [start:check]
def check(scores):
    diff = (scores(q, k) - scores_trained).abs().max().item()
    print(f"max |scores - trained model's scores| = {diff:.4f}")


check(scores_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
# reorder the features once, when loading the weights: 0, 4, 1, 5, 2, 6, ...
# so that partners p and p + d_k / 2 become neighbours 2p and 2p + 1
perm = torch.arange(d_k, device=device).view(2, d_k // 2).T.flatten()  # (d_k,)


def scores_fixed(q, k):
    return rope_interleaved(q[:, perm]) @ rope_interleaved(k[:, perm]).T


print("feature order:", perm.tolist())
check(scores_fixed)
# --8<-- [end:fix]
