"""Input checks for chapter 3's attention: errors that name the shapes.

attention.py's checked_attention calls check_attention_inputs before the
four steps; the page shows this file folded, after the idea.
"""

# --8<-- [start:checks]
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


# --8<-- [end:checks]
