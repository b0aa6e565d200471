"""Rotary position embedding (RoPE, Su et al., arXiv 2104.09864)."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:functions]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def rope_angles(positions, d_k, dtype=torch.float32, base=10000.0):
    """Angle i θ_p for position i and pair p, θ_p = base^(-2p/d_k)."""
    two_p = torch.arange(0, d_k, 2, device=positions.device, dtype=dtype)
    theta = base ** (-two_p / d_k)  # (d_k/2,)
    return positions.to(dtype)[..., None] * theta  # (..., L, d_k/2)


def rope(x, positions, base=10000.0):
    """Turn each pair (x_2p, x_2p+1) of x (..., L, d_k) by the angle i θ_p."""
    angles = rope_angles(positions, x.shape[-1], x.dtype, base)
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]  # the two features of each pair
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2)  # pairs back in place: 2p, 2p+1


# --8<-- [end:functions]


# --8<-- [start:robust]
def check_rope_input(x, positions):
    """x: float (..., L, d_k), d_k even; positions: integers (L,) or (..., L).

    positions is (L,), the same for every row, or has one dimension per
    leading dimension of x: for x (B, H, L, d_k), give (B, 1, L), not (B, L).
    """
    if not (torch.is_tensor(x) and torch.is_tensor(positions)):
        raise TypeError("x and positions must be tensors")
    shapes = f"x {tuple(x.shape)}, positions {tuple(positions.shape)}"
    if not (x.is_floating_point() and x.ndim >= 2):
        raise TypeError(f"x must be a float (..., L, d_k) tensor: {shapes}")
    if x.shape[-1] % 2:
        raise ValueError(
            f"d_k = {x.shape[-1]} must be even to form pairs: {shapes}"
        )
    kind = positions.dtype
    if kind.is_floating_point or kind.is_complex or kind == torch.bool:
        raise TypeError(f"positions must be integers, got {kind}")
    try:
        fits = torch.broadcast_shapes(positions.shape, x.shape[:-1])
    except RuntimeError:
        fits = None
    if positions.ndim == 0 or fits != x.shape[:-1]:
        raise ValueError(f"positions must broadcast to (..., L): {shapes}")
    if positions.ndim not in (1, x.ndim - 1):  # (B, L) for (B, H, L, d_k)
        raise ValueError(
            f"positions must be (L,) or have one dimension per leading "
            f"dimension of x, e.g. (B, 1, L) for (B, H, L, d_k): {shapes}"
        )


def checked_rope(x, positions, base=10000.0):
    """rope after the checks; float16 and bfloat16 x are turned in float32."""
    check_rope_input(x, positions)
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    return rope(x.to(wide), positions, base).to(x.dtype)


# --8<-- [end:robust]


if __name__ == "__main__":
    # --8<-- [start:pair]
    q = torch.tensor([[1.0, 0.0]], device=device)  # (1, 2): one pair
    k = torch.tensor([[0.0, 1.0]], device=device)  # (1, 2): one pair

    def direction(v):
        """The direction of a 2-D vector, in degrees from 0 to 360."""
        return (torch.atan2(v[0, 1], v[0, 0]).rad2deg() % 360).item()

    placements = [(1, 0), (4, 3)]  # pairs (i, j): q at position i, k at j
    for i, j in placements:
        q_i = rope(q, torch.tensor([i], device=device))  # turned by i radians
        k_j = rope(k, torch.tensor([j], device=device))  # turned by j radians
        between = (direction(k_j) - direction(q_i)) % 360
        print(
            f"q at {i}: {direction(q_i):5.1f}°  k at {j}: "
            f"{direction(k_j):5.1f}°  angle from q to k: {between:.1f}°"
        )
    # --8<-- [end:pair]
    pair_q, pair_k = q, k  # the figure rope-rotation turns these two

    # --8<-- [start:relative]
    torch.manual_seed(1)
    q = torch.randn(1, 8, dtype=torch.float64).to(device)  # (1, 8): one query
    k = torch.randn(1, 8, dtype=torch.float64).to(device)  # (1, 8): one key

    def score(i, j):
        """q placed at position i, k at position j, then q · k."""
        q_i = rope(q, torch.tensor([i], device=device))
        k_j = rope(k, torch.tensor([j], device=device))
        return (q_i * k_j).sum()

    for i, j in [(3, 0), (10, 7), (103, 100), (0, 3), (7, 10)]:
        value = score(i, j).round(decimals=4).item()
        print(f"i={i:>3}  j={j:>3}  i-j={i - j:>2}  q_i · k_j = {value:+.4f}")
    # --8<-- [end:relative]

    # the figure: scores for every (i, j) in 0..15, and against i - j
    grid = torch.tensor([[score(i, j) for j in range(16)] for i in range(16)])
    offsets = list(range(-24, 25))
    by_offset = [score(max(o, 0), max(-o, 0)).item() for o in offsets]

    # --8<-- [start:in_attention]
    import torch.nn.functional as F

    torch.manual_seed(2)
    B, L, d_model, H = 1, 6, 16, 2
    d_k = d_model // H
    W_Q, W_K, W_V = (
        torch.randn(d_model, d_model).to(device) / d_model**0.5
        for _ in range(3)
    )  # 3 × (d_model, d_model)
    x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)

    def split(t):
        """(B, L, d_model) -> (B, H, L, d_k): a slice of features per head."""
        return t.view(B, L, H, d_k).transpose(1, 2)

    def attention(x, positions, rotate_v=False):
        """Causal self-attention, RoPE on Q and K after the projections."""
        q, k, v = (split(x @ W) for W in (W_Q, W_K, W_V))
        q, k = rope(q, positions), rope(k, positions)  # before the scores
        if rotate_v:  # not part of RoPE: shown to see what it would do
            v = rope(v, positions)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    positions = torch.arange(L, device=device)  # (L,)
    out = attention(x, positions)  # (B, H, L, d_k)
    for shift in [7, 100]:  # move the whole sentence to other positions
        moved = attention(x, positions + shift)
        also_v = attention(x, positions + shift, rotate_v=True)
        print(
            f"positions + {shift:>3}: same output",
            torch.allclose(moved, out, atol=1e-5),
            "| with V rotated:",
            torch.allclose(also_v, out, atol=1e-5),
        )
    # --8<-- [end:in_attention]

    # --8<-- [start:bad_input]
    for bad_x, bad_positions in [
        (torch.randn(4, 7), torch.arange(4)),  # d_k = 7: no pairs
        (torch.randn(4, 8), torch.arange(5)),  # 5 positions for 4 tokens
        (torch.randn(4, 8), torch.arange(4.0)),  # float positions
    ]:
        try:
            checked_rope(bad_x.to(device), bad_positions.to(device))
        except (ValueError, TypeError) as error:
            print(f"{type(error).__name__}: {error}")
    # --8<-- [end:bad_input]
