"""Attention by hand, checked against F.scaled_dot_product_attention."""

# --8<-- [start:core]
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q kᵀ / √d_k) v, and the weights. mask: True = may attend."""
    wide = torch.promote_types(q.dtype, torch.float32)  # float16 -> float32
    scores = q.to(wide) @ k.to(wide).transpose(-2, -1)  # step 1
    scores = scores / q.shape[-1] ** 0.5  # step 2
    if mask is not None and mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, float("-inf"))  # hide keys
    elif mask is not None:
        scores = scores + mask  # a float mask is added to the scores
    weights = torch.softmax(scores, dim=-1).to(v.dtype)  # step 3
    return weights @ v, weights  # step 4


# --8<-- [end:core]

# the page shows checks.py here, folded, before the robust version
from snippets.scaled_dot_product.checks import check_attention_inputs  # noqa: E402


# --8<-- [start:robust]
def checked_attention(q, k, v, mask=None):
    """scaled_dot_product_attention, after checking its inputs."""
    check_attention_inputs(q, k, v, mask)
    return scaled_dot_product_attention(q, k, v, mask)


# --8<-- [end:robust]


if __name__ == "__main__":
    # --8<-- [start:compare]
    import torch.nn.functional as F

    device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.manual_seed(0)
    B, H, L, d_k = 2, 3, 5, 8  # batch, heads, sequence length, width per head
    q, k, v = torch.randn(3, B, H, L, d_k).to(device)  # 3 × (B, H, L, d_k)

    out, weights = scaled_dot_product_attention(q, k, v)
    print(out.shape, weights.shape)
    ref = F.scaled_dot_product_attention(q, k, v)  # (B, H, L, d_k)
    print(out[0, 0, 0, :4].cpu())  # the start of one output row: ours
    print(ref[0, 0, 0, :4].cpu())  # and PyTorch's
    # --8<-- [end:compare]

    # --8<-- [start:compare_masks]
    lengths = torch.tensor([5, 3], device=device)  # (B,)
    # True = a real token, False = padding
    keep = torch.arange(L, device=device) < lengths[:, None]  # (B, L)
    keep = keep[:, None, None, :]  # (B, 1, 1, L): every head, every query
    out, weights = scaled_dot_product_attention(q, k, v, mask=keep)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    print(weights[1, 0, 0].cpu())  # sequence 1, head 0, query 0: 0 on padding
    print(out[1, 0, 0, :4].cpu())
    print(ref[1, 0, 0, :4].cpu())
    # --8<-- [end:compare_masks]

    # --8<-- [start:bad_input]
    for bad in [
        lambda: checked_attention(q, k[..., :6], v),  # d_k 8 vs 6
        lambda: checked_attention(q, k, v[..., :4, :]),  # L_k 5 vs 4
        lambda: checked_attention(q, k, v, mask=keep[..., :4]),
        lambda: checked_attention(q.long(), k, v),  # integers
    ]:
        try:
            bad()
        except (ValueError, TypeError) as error:
            print(f"{type(error).__name__}: {error}")
    # --8<-- [end:bad_input]
