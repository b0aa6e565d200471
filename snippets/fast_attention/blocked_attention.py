"""Blocked attention: tiles of queries and keys, a running max and sum."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:blocked]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"


def blocked_attention(q, k, v, block_q, block_k, is_causal=False):
    """softmax(q kᵀ / √d_k) v, one (block_q, block_k) tile of scores at a time.

    q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v). No L_q x L_k
    score matrix is ever stored: per query, only a running max m, a running
    sum of exp(score - m) and a running weighted sum of the values.
    """
    L_q, L_k, d_k = q.shape[-2], k.shape[-2], q.shape[-1]
    out = torch.empty(
        *q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device
    )
    for i0 in range(0, L_q, block_q):  # one tile of queries at a time
        q_tile = q[..., i0 : i0 + block_q, :] / d_k**0.5
        rows = q_tile.shape[-2]
        m = q.new_full((*q.shape[:-2], rows, 1), float("-inf"))  # running max
        total = q.new_zeros((*q.shape[:-2], rows, 1))  # running sum
        acc = q.new_zeros((*q.shape[:-2], rows, v.shape[-1]))  # weighted sum
        for j0 in range(0, L_k, block_k):  # one tile of keys at a time
            if is_causal and j0 > i0 + rows - 1:
                break  # every key from here on is after every query: skip
            scores = q_tile @ k[..., j0 : j0 + block_k, :].transpose(-2, -1)
            if is_causal:  # hide key j > query i (inside the tile)
                i = torch.arange(i0, i0 + rows, device=q.device)[:, None]
                j = torch.arange(j0, j0 + scores.shape[-1], device=q.device)
                scores = scores.masked_fill(j > i, float("-inf"))
            m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
            scale = torch.exp(m - m_new)  # exp(m_old - m_new): rescale
            p = torch.exp(scores - m_new)  # this tile's unnormalised weights
            total = total * scale + p.sum(dim=-1, keepdim=True)
            acc = acc * scale + p @ v[..., j0 : j0 + block_k, :]
            m = m_new
        out[..., i0 : i0 + rows, :] = acc / total  # normalise once
    return out


# --8<-- [end:blocked]


if __name__ == "__main__":
    # --8<-- [start:check]
    torch.manual_seed(0)
    B, H, L, d_k = 2, 4, 64, 16
    q = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)
    k = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)
    v = torch.randn(B, H, L, d_k).to(device)  # (B, H, L, d_k)

    for block_q, block_k in [(8, 8), (16, 32), (64, 24)]:
        for is_causal in [False, True]:
            ours = blocked_attention(q, k, v, block_q, block_k, is_causal)
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
            diff = (ours - ref).abs().max()  # the largest difference
            print(
                f"tiles {block_q:>2} x {block_k:>2}, causal={is_causal!s:<5}: "
                f"max |blocked - SDPA| = {diff:.6f}"
            )
    out = blocked_attention(q, k, v, 16, 16)  # (B, H, L, d_k)
    # --8<-- [end:check]

    # --8<-- [start:skipped]
    def tiles(L, block, is_causal):
        """How many (query tile, key tile) pairs blocked_attention computes."""
        starts = range(0, L, block)
        return sum(
            1
            for i0 in starts
            for j0 in starts
            if not is_causal or j0 <= i0 + block - 1
        )

    n_tiles = (L // 16) ** 2
    print(f"tiles of 16 x 16, not causal: {tiles(L, 16, False)} of {n_tiles}")
    print(f"tiles of 16 x 16, causal:     {tiles(L, 16, True)} of {n_tiles}")
    # --8<-- [end:skipped]
