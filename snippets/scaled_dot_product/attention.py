"""Attention by hand, checked against F.scaled_dot_product_attention."""

# --8<-- [start:function]
import torch


def check_attention_inputs(q, k, v, mask=None):
    """Raise unless q (..., L_q, d_k), k (..., L_k, d_k), v (..., L_k, d_v)."""
    for name, t in (("q", q), ("k", k), ("v", v), ("mask", mask)):
        if not (torch.is_tensor(t) or (name == "mask" and t is None)):
            raise TypeError(f"{name} must be a tensor, got {type(t).__name__}")
    qs, ks, vs = tuple(q.shape), tuple(k.shape), tuple(v.shape)
    for name, t in (("q", q), ("k", k), ("v", v)):
        shape = tuple(t.shape)
        if t.ndim < 2:
            raise ValueError(f"{name} must be (..., L, d), got shape {shape}")
        if 0 in shape[-2:]:
            raise ValueError(f"{name} {shape} has an empty dimension")
        if not t.is_floating_point():
            raise TypeError(f"{name} {shape} must be float, got {t.dtype}")
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}")
    if qs[-1] != ks[-1]:
        raise ValueError(f"q {qs} and k {ks} need the same feature size d_k")
    if ks[-2] != vs[-2]:
        raise ValueError(f"k {ks} and v {vs} need the same length L_k")
    try:
        batch = torch.broadcast_shapes(qs[:-2], ks[:-2], vs[:-2])
    except RuntimeError:
        raise ValueError(f"batches of q {qs}, k {ks}, v {vs} differ") from None
    if mask is None:
        return
    target = (*batch, qs[-2], ks[-2])  # the shape of the scores
    try:
        fits = torch.broadcast_shapes(mask.shape, target) == target
    except RuntimeError:
        fits = False
    if not fits:
        ms = tuple(mask.shape)
        raise ValueError(f"mask {ms} does not broadcast to the scores {target}")
    if mask.dtype not in (torch.bool, q.dtype):
        raise TypeError(f"mask must be bool or {q.dtype}, got {mask.dtype}")
    if mask.dtype != torch.bool and looks_like_keep_mask(mask):
        raise ValueError(
            f"mask {tuple(mask.shape)} is float with only 0s and 1s: float "
            "masks are added to the scores; to keep/hide keys pass a bool "
            "mask (True = may attend)"
        )


def looks_like_keep_mask(mask):
    """A float mask of only 0s and 1s (some 1s): a keep mask by mistake."""
    return bool(((mask == 0) | (mask == 1)).all() and (mask == 1).any())


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q kᵀ / √d_k) v, returned with the weights.

    Shapes: output (..., L_q, d_v), weights (..., L_q, L_k).

    mask: bool, True = may attend (as in F.scaled_dot_product_attention),
    or float, added to the scores. A row with every key masked gives NaN.
    """
    check_attention_inputs(q, k, v, mask)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5  # step 1 and step 2
    if mask is not None and mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, float("-inf"))
    elif mask is not None:
        scores = scores + mask
    weights = torch.softmax(scores, dim=-1)  # step 3
    return weights @ v, weights  # step 4


# --8<-- [end:function]


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
    print(torch.allclose(out, ref, atol=1e-5))
    # --8<-- [end:compare]

    # --8<-- [start:compare_masks]
    # causal: query i may attend to keys 0 to i
    keep = torch.ones(L, L, dtype=torch.bool, device=device).tril()  # (L, L)
    out, weights = scaled_dot_product_attention(q, k, v, mask=keep)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    print(torch.allclose(out, ref, atol=1e-5))

    lengths = torch.tensor([5, 3], device=device)  # (B,)
    # True = a real token, False = padding
    keep = torch.arange(L, device=device) < lengths[:, None]  # (B, L)
    keep = keep[:, None, None, :]  # (B, 1, 1, L): every head, every query
    out, weights = scaled_dot_product_attention(q, k, v, mask=keep)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    print(torch.allclose(out, ref, atol=1e-5))
    print(weights[1, 0, 0].cpu())  # sequence 1, head 0, query 0: 0 on padding
    # --8<-- [end:compare_masks]

    # --8<-- [start:bad_input]
    for bad in [
        lambda: scaled_dot_product_attention(q, k[..., :6], v),  # d_k 8 vs 6
        lambda: scaled_dot_product_attention(q, k, v[..., :4, :]),  # L_k 5 vs 4
        lambda: scaled_dot_product_attention(q, k, v, mask=keep[..., :4]),
        lambda: scaled_dot_product_attention(q.long(), k, v),  # integers
    ]:
        try:
            bad()
        except (ValueError, TypeError) as error:
            print(f"{type(error).__name__}: {error}")
    # --8<-- [end:bad_input]
