"""QKVProjection: the three projections of self- and cross-attention."""

# --8<-- [start:module]
import torch
from torch import nn


class QKVProjection(nn.Module):
    """Q = X W^Q, K = C W^K, V = C W^V; C is X itself or another sequence."""

    def __init__(self, d_model, d_k, d_v, d_context=None):
        super().__init__()
        d_context = d_model if d_context is None else d_context
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_context, d_k, bias=False)
        self.w_v = nn.Linear(d_context, d_v, bias=False)

    def forward(self, x, context=None):
        context = x if context is None else context  # None: self-attention
        return self.w_q(x), self.w_k(context), self.w_v(context)
        # --8<-- [end:module]


# --8<-- [start:robust]
def check_sequence(name: str, t: torch.Tensor, d: int) -> None:
    """Raise unless t is a float tensor of shape (..., L, d) with L >= 1."""
    shape = tuple(t.shape)
    if t.ndim < 2:
        raise ValueError(
            f"{name} must be (L, {d}) or (B, L, {d}), got shape {shape}"
        )
    if not t.is_floating_point():
        message = f"{name} must be a float tensor, got {t.dtype}, shape {shape}"
        raise TypeError(message)
    if shape[-2] == 0:
        raise ValueError(f"{name} needs at least one token, got shape {shape}")
    if shape[-1] != d:
        raise ValueError(
            f"{name} has {shape[-1]} features per token but the projection "
            f"expects {d}: shape {shape}"
        )


def check_qkv_inputs(proj, x, context):
    """Raise unless x and context fit proj: features, batch, dtype."""
    check_sequence("x", x, proj.w_q.in_features)
    check_sequence("context", context, proj.w_k.in_features)
    if x.shape[:-2] != context.shape[:-2]:
        raise ValueError(
            f"x {tuple(x.shape)} and context {tuple(context.shape)} "
            "have different batch dimensions"
        )
    weight_dtype = proj.w_q.weight.dtype
    for name, t in [("x", x), ("context", context)]:
        if t.dtype != weight_dtype:
            raise TypeError(
                f"{name} is {t.dtype}, shape {tuple(t.shape)}, but the "
                f"weights are {weight_dtype}"
            )


class CheckedQKVProjection(QKVProjection):
    """QKVProjection that checks its sizes and its input first."""

    def __init__(self, d_model, d_k, d_v, d_context=None):
        sizes = dict(d_model=d_model, d_k=d_k, d_v=d_v, d_context=d_context)
        for name, size in sizes.items():
            if size is not None and (not isinstance(size, int) or size < 1):
                raise ValueError(f"{name} must be a positive int, got {size!r}")
        super().__init__(d_model, d_k, d_v, d_context)

    def forward(self, x, context=None):
        context = x if context is None else context
        check_qkv_inputs(self, x, context)
        return super().forward(x, context)
        # --8<-- [end:robust]


if __name__ == "__main__":
    # --8<-- [start:build]
    device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.manual_seed(0)
    proj = QKVProjection(d_model=8, d_k=6, d_v=5).to(device)
    print(proj.w_q.weight.shape, proj.w_v.weight.shape)
    # --8<-- [end:build]

    # --8<-- [start:use]
    import torch.nn.functional as F

    x = torch.randn(2, 4, 8).to(device)  # (2, 4, 8): 2 sequences, 4 tokens each
    memory = torch.randn(2, 7, 8).to(device)  # (2, 7, 8): 2 more, 7 tokens each

    Q, K, V = proj(x)  # self-attention: all three from x
    print("self ", [tuple(t.shape) for t in (Q, K, V)])
    diff = (Q - x @ proj.w_q.weight.T).abs().max().item()
    print(f"max |Q - x W^Q| = {diff:.6f}")

    Q, K, V = proj(x, memory)  # cross-attention: K and V from memory
    print("cross", [tuple(t.shape) for t in (Q, K, V)])
    print("output", tuple(F.scaled_dot_product_attention(Q, K, V).shape))
    # --8<-- [end:use]

    # --8<-- [start:bad_input]
    checked = CheckedQKVProjection(d_model=8, d_k=6, d_v=5).to(device)
    bad_inputs = [
        torch.randn(8),  # one token without a sequence axis
        torch.randn(4, 7),  # 7 features, the projection expects 8
        torch.randn(0, 8),  # no tokens at all
        torch.ones(4, 8, dtype=torch.int64),  # token ids, not vectors
    ]
    for bad in bad_inputs:
        try:
            checked(bad.to(device))
        except (ValueError, TypeError) as error:
            print(f"{type(error).__name__}: {error}")
    # --8<-- [end:bad_input]
