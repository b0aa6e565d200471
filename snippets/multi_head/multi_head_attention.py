"""Multi-head self-attention for (B, L, d_model) or (L, d_model) input."""

# --8<-- [start:checks]
import math
import warnings

import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


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


# --8<-- [start:module]
class MultiHeadAttention(nn.Module):
    """Multi-head self-attention of x: (B, L, d_model) or (L, d_model)."""

    def __init__(self, embed_dim: int, num_heads: int, bias: bool = True):
        super().__init__()
        check_heads(embed_dim, num_heads)
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads  # d_k = d_model / H
        # W^Q, W^K, W^V of all heads stacked: one (3·d_model, d_model) weight
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)  # W^O

    def split_heads(self, t: torch.Tensor) -> torch.Tensor:
        """(B, L, d_model) -> (B, H, L, d_k): head i gets the i-th block."""
        B, L, _ = t.shape
        return t.view(B, L, self.num_heads, self.head_dim).transpose(1, 2)

    def merge_heads(self, t: torch.Tensor) -> torch.Tensor:
        """(B, H, L, d_k) -> (B, L, d_model): the heads side by side."""
        B, _, L, _ = t.shape
        return t.transpose(1, 2).reshape(B, L, self.embed_dim)

    def forward(self, x, attn_mask=None, key_padding_mask=None, trace=None):
        """Return (output shaped like x, weights (B, H, L, L) or (H, L, L)).

        Masks are bool with True = do not attend, as in nn.MultiheadAttention:
        attn_mask (L, L), key_padding_mask (B, L) or (L,) for unbatched x.
        If trace is a dict, every intermediate tensor is stored in it.
        """
        check_input(
            x, self.embed_dim, attn_mask, key_padding_mask, self.in_proj.weight
        )
        unbatched = x.ndim == 2
        if unbatched:  # (L, d_model) -> (1, L, d_model)
            x = x.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)

        Q, K, V = self.in_proj(x).chunk(3, dim=-1)  # 3 × (B, L, d_model)
        Q_h, K_h, V_h = map(self.split_heads, (Q, K, V))  # 3 × (B, H, L, d_k)
        # (B, H, L, d_k) @ (B, H, d_k, L) -> (B, H, L, L), scaled by 1/√d_k
        scores = Q_h @ K_h.transpose(-2, -1) / math.sqrt(self.head_dim)
        if attn_mask is not None:
            scores = scores.masked_fill(attn_mask, float("-inf"))
        if key_padding_mask is not None:
            # (B, L) -> (B, 1, 1, L): hide these keys from all queries and heads
            scores = scores.masked_fill(
                key_padding_mask[:, None, None, :], float("-inf")
            )
        weights = torch.softmax(scores, dim=-1)  # (B, H, L, L): rows sum to 1
        heads = weights @ V_h  # (B, H, L, d_k): one result per head
        merged = self.merge_heads(heads)  # (B, L, d_model) = Concat(heads)
        out = self.out_proj(merged)  # (B, L, d_model): W^O mixes the heads

        if trace is not None:
            trace.update(X=x, Q=Q, K=K, V=V, Q_h=Q_h, K_h=K_h, V_h=V_h)
            trace.update(scores=scores, weights=weights, heads=heads)
            trace.update(merged=merged, output=out)
        if unbatched:
            return out.squeeze(0), weights.squeeze(0)
        return out, weights

    # --8<-- [end:module]


if __name__ == "__main__":
    # --8<-- [start:check_demo]
    # valid input passes silently; section 4.5 shows what bad input raises
    check_heads(12, 3)
    check_input(torch.randn(2, 5, 12, device=device), embed_dim=12)
    # --8<-- [end:check_demo]

    # --8<-- [start:build]
    torch.manual_seed(0)
    B, L, d_model, H = 2, 5, 12, 3  # batch, tokens, width, heads
    mha = MultiHeadAttention(d_model, H).to(device)
    print(mha)
    # --8<-- [end:build]

    # --8<-- [start:shapes]
    x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)

    trace = {}  # filled with every intermediate tensor
    out, weights = mha(x, trace=trace)
    print("x       ", tuple(x.shape))
    print("Q       ", tuple(trace["Q"].shape), "->", tuple(trace["Q_h"].shape))
    print("out     ", tuple(out.shape))
    print("weights ", tuple(weights.shape))

    # one sequence without the batch dimension works too
    x0 = x[0]  # (L, d_model)
    out0, weights0 = mha(x0)
    print("x0      ", tuple(x0.shape))
    print("out0    ", tuple(out0.shape))
    print("weights0", tuple(weights0.shape))
    torch.testing.assert_close(out0, out[0])  # same as sequence 0 of the batch
    # --8<-- [end:shapes]

    # --8<-- [start:compare]
    ref = nn.MultiheadAttention(d_model, H, batch_first=True)
    with torch.no_grad():
        # PyTorch starts its biases at 0; random ones make the test cover them
        nn.init.normal_(ref.in_proj_bias)
        nn.init.normal_(ref.out_proj.bias)
    ref = ref.to(device)

    with torch.no_grad():  # copy PyTorch's weights into our module
        mha.in_proj.weight.copy_(ref.in_proj_weight)  # W^Q, W^K, W^V
        mha.in_proj.bias.copy_(ref.in_proj_bias)
        mha.out_proj.weight.copy_(ref.out_proj.weight)  # W^O
        mha.out_proj.bias.copy_(ref.out_proj.bias)

    # True = do not attend: no looking ahead; sequence 1 ends in 2 pad tokens
    causal = torch.ones(L, L, dtype=torch.bool, device=device).triu(diagonal=1)
    padding = torch.zeros(B, L, dtype=torch.bool, device=device)  # (B, L)
    padding[1, -2:] = True

    cases = {
        "no mask": {},
        "causal": {"attn_mask": causal},
        "causal + padding": {"attn_mask": causal, "key_padding_mask": padding},
    }
    for name, masks in cases.items():
        ours, our_weights = mha(x, **masks)
        theirs, their_weights = ref(
            x, x, x, **masks, average_attn_weights=False
        )
        torch.testing.assert_close(ours, theirs)
        torch.testing.assert_close(our_weights, their_weights)  # (B, H, L, L)
        print(f"{name:16} output and per-head weights match")
    # --8<-- [end:compare]

    # --8<-- [start:bad_input]
    bad_calls = {
        "wrong rank": lambda: mha(x[0, 0]),  # (d_model,)
        "wrong d_model": lambda: mha(x[..., :10]),  # (B, L, 10)
        "empty sequence": lambda: mha(x[:, :0]),  # (B, 0, d_model)
        "integers": lambda: mha(x.long()),
        "d_model % H != 0": lambda: MultiHeadAttention(10, 3),
    }
    for name, call in bad_calls.items():
        try:
            call()
        except (ValueError, TypeError) as error:
            print(f"{name:16} {type(error).__name__}: {error}")
    # --8<-- [end:bad_input]

    # --8<-- [start:w_o]
    import copy

    # zero W_0^V, head 0's value matrix: the d_k rows of in_proj from 2·d_model
    mha_0 = copy.deepcopy(mha)
    d_k = mha.head_dim
    with torch.no_grad():
        mha_0.in_proj.weight[2 * d_model : 2 * d_model + d_k].zero_()

    before, after = {}, {}
    mha(x, trace=before)
    mha_0(x, trace=after)

    def changed(a, b):
        """Indices along the last dimension where a and b differ anywhere."""
        differs = (a - b).abs().amax(dim=(0, 1)) > 1e-6
        return differs.nonzero().flatten().tolist()

    print("concat columns changed:", changed(before["merged"], after["merged"]))
    print("output columns changed:", changed(before["output"], after["output"]))
    # --8<-- [end:w_o]

    # --8<-- [start:parameters]
    def count(module):
        return sum(p.numel() for p in module.parameters())

    d_model = 512
    for bias in (True, False):
        n_torch = count(nn.MultiheadAttention(d_model, 8, bias=bias).to(device))
        n_ours = count(MultiHeadAttention(d_model, 8, bias=bias).to(device))
        print(f"bias={bias}: PyTorch {n_torch:,}, ours {n_ours:,}")
    for H in (1, 8, 16):
        n_ours = count(MultiHeadAttention(d_model, H).to(device))
        print(f"H = {H:2}: ours {n_ours:,}")
    print(f"4·d_model² + 4·d_model = {4 * d_model**2 + 4 * d_model:,}")
    print(f"4·d_model²             = {4 * d_model**2:,}")
    # --8<-- [end:parameters]

    # --8<-- [start:parameter_shapes]
    # where nn.MultiheadAttention keeps them: W^Q, W^K, W^V packed in one tensor
    ref_512 = nn.MultiheadAttention(d_model, 8).to(device)
    for name, p in ref_512.named_parameters():
        print(f"{name:<16} {tuple(p.shape)}")
    # --8<-- [end:parameter_shapes]
