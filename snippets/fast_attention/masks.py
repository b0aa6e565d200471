"""Sliding-window and document masks; FlexAttention's mask_mod and score_mod."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:masks]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

L, W = 8, 3  # 8 tokens; each sees itself and the 2 tokens before it
i = torch.arange(L, device=device)[:, None]  # (L, 1): query positions
j = torch.arange(L, device=device)  # (L,): key positions
sliding = (j <= i) & (i - j < W)  # (L, L): True = may attend
# three short documents packed into one sequence of 8 tokens
doc = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2], device=device)  # (L,)
document = (j <= i) & (doc[:, None] == doc)  # (L, L): causal, within a document


def show(name, mask):
    print(name)
    for row in mask.long().tolist():
        print("  " + " ".join(map(str, row)))


show(f"sliding window, W = {W}:", sliding)
show(f"documents {doc.tolist()}:", document)
# --8<-- [end:masks]

# --8<-- [start:flex]
# requires torch >= 2.5: torch.nn.attention.flex_attention
import warnings

from torch.nn.attention.flex_attention import create_block_mask, flex_attention

# without torch.compile, flex_attention runs in eager mode: it computes the
# full score matrix (fine for checking a mask), and warns that it does
warnings.filterwarnings("ignore", "flex_attention called without torch.compile")


def sliding_window(W):
    """A mask_mod: the rule of `sliding` for one (query, key) pair."""

    def mask_mod(b, h, q_idx, kv_idx):  # True = may attend
        return (kv_idx <= q_idx) & (q_idx - kv_idx < W)

    return mask_mod


def documents(doc):
    def mask_mod(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (doc[q_idx] == doc[kv_idx])

    return mask_mod


torch.manual_seed(0)
B, H, d_k = 2, 4, 16
q, k, v = (torch.randn(B, H, L, d_k).to(device) for _ in range(3))
for name, mod, mask in [
    ("sliding window", sliding_window(W), sliding),
    ("documents", documents(doc), document),
]:
    block_mask = create_block_mask(mod, None, None, L, L, device=device)
    flex = flex_attention(q, k, v, block_mask=block_mask)  # (B, H, L, d_k)
    plain = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    print(f"{name}: max |flex - plain mask| = {(flex - plain).abs().max():.6f}")
# --8<-- [end:flex]

# --8<-- [start:block_mask]
# 512 tokens, a window of 64: which 128 x 128 tiles hold a key to see
block_mask = create_block_mask(sliding_window(64), None, None, 512, 512, device)
tiles = block_mask.to_dense()[0, 0]  # (4, 4): one entry per tile
print(tiles.cpu())
print(f"tiles computed: {int(tiles.sum())} of {tiles.numel()}")
# --8<-- [end:block_mask]

# --8<-- [start:alibi]
# ALiBi (chapter 6) as a score_mod: add -m * (i - j) to each score
slopes = 2 ** (-8 * torch.arange(1, H + 1, device=device) / H)  # m per head


def alibi(slopes):
    def score_mod(score, b, h, q_idx, kv_idx):  # returns the new score
        return score + slopes[h] * (kv_idx - q_idx)

    return score_mod


causal = create_block_mask(sliding_window(L), None, None, L, L, device=device)
flex = flex_attention(q, k, v, score_mod=alibi(slopes), block_mask=causal)
# the plain version: chapter 6's bias matrix, -inf above the diagonal
bias = slopes[:, None, None] * (j - i)  # (H, L, L)
bias = bias.masked_fill(j > i, float("-inf"))  # (H, L, L)
plain = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
print(f"ALiBi: max |flex - plain bias| = {(flex - plain).abs().max():.6f}")
# --8<-- [end:alibi]
