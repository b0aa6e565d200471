"""Input checks for chapter 4's MultiHeadAttention (its robust version)."""

# --8<-- [start:checks]
import warnings

import torch


def check_heads(embed_dim: int, num_heads: int) -> None:
    """Raise unless the d_model features split evenly into H >= 1 heads."""
    if num_heads < 1 or embed_dim % num_heads != 0:
        raise ValueError(f"{embed_dim = } is not divisible by {num_heads = }")


def check_input(
    x, embed_dim, attn_mask=None, key_padding_mask=None, weight=None
) -> None:
    """Raise unless x is float (B, L, d_model) or (L, d_model), L >= 1.

    d_model = embed_dim, the width the module was built for.

    Masks must be bool: attn_mask (L, L), key_padding_mask (B, L) or (L,).
    weight: a parameter of the module; x must have its dtype and device.
    """
    if not torch.is_tensor(x):
        raise TypeError(f"x must be a tensor, got {type(x).__name__}")
    shape = tuple(x.shape)
    if x.ndim not in (2, 3):
        raise ValueError(
            f"x must be (B, L, d_model) or (L, d_model), got shape {shape}"
        )
    if not x.is_floating_point():
        raise TypeError(f"x must be float, got {x.dtype}, shape {shape}")
    if shape[-1] != embed_dim:
        raise ValueError(
            f"x {shape} has d_model = {shape[-1]}, "
            f"expected embed_dim = {embed_dim}"
        )
    if 0 in shape:
        raise ValueError(f"x needs at least one token, got shape {shape}")
    L = shape[-2]
    masks = {
        "attn_mask": (attn_mask, (L, L)),
        "key_padding_mask": (key_padding_mask, shape[:-1]),
    }
    for name, (mask, expected) in masks.items():
        if mask is None:
            continue
        kind = mask.dtype if torch.is_tensor(mask) else type(mask).__name__
        if kind != torch.bool:
            raise TypeError(
                f"{name} must be bool (True = do not attend), got {kind}"
            )
        if tuple(mask.shape) != expected:
            raise ValueError(
                f"{name} must have shape {expected} for x of shape {shape}, "
                f"got {tuple(mask.shape)}"
            )
    check_some_key_visible(attn_mask, key_padding_mask)
    if attn_mask is not None and L > 1 and bool(attn_mask.diagonal().all()):
        # every query sees some key, but none itself: almost surely a mask
        # in F.scaled_dot_product_attention's convention (True = attend)
        warnings.warn(
            "attn_mask hides every query's own key: here True means do not "
            "attend (nn.MultiheadAttention's convention); invert a mask in "
            "which True means attend: ~mask",
            stacklevel=2,
        )
    w = weight
    if w is not None and (x.dtype, x.device) != (w.dtype, w.device):
        raise TypeError(
            f"x {shape} is {x.dtype} on {x.device}, but the module's "
            f"parameters are {weight.dtype} on {weight.device}"
        )


def check_some_key_visible(attn_mask, key_padding_mask) -> None:
    """Raise if a query has every key hidden (its softmax would be NaN)."""
    hidden = attn_mask if attn_mask is not None else False
    if key_padding_mask is not None:
        # True where key j is hidden from query i (in every batch row)
        hidden = key_padding_mask[..., None, :] | hidden
    if not torch.is_tensor(hidden) or not hidden.all(dim=-1).any():
        return
    row = hidden.all(dim=-1).nonzero()[0].tolist()  # [b,] query
    raise ValueError(
        f"query {row[-1]} (index {row}) sees no key: the masks hide every "
        "key from it. Masks are True = hidden, as in nn.MultiheadAttention "
        "(not True = may attend, as in F.scaled_dot_product_attention)"
    )


# --8<-- [end:checks]
