"""Softmax(X Xᵀ) X as one function, checked against PyTorch's attention."""

# --8<-- [start:idea]
import torch


def self_attention_without_parameters(x):
    """Softmax(X Xᵀ) X for x of shape (L, d), or (B, L, d) for a batch."""
    S = x @ x.transpose(-2, -1)  # similarities: every pair of rows
    A = torch.softmax(S, dim=-1)  # weights: each row sums to 1
    return A @ x  # row i: the rows of x, weighted by row i of A
    # --8<-- [end:idea]


# --8<-- [start:robust]
def check_tokens(name: str, t: torch.Tensor) -> None:
    """Raise unless t is a float tensor of shape (..., L, d), L, d >= 1."""
    shape = tuple(t.shape)
    if t.ndim < 2:
        raise ValueError(f"{name} must be (L, d) or (B, L, d), got {shape}")
    if 0 in shape[-2:]:
        raise ValueError(f"{name} needs a row and a column, got shape {shape}")
    if not t.is_floating_point():
        raise TypeError(f"{name} must be float, got {t.dtype}, shape {shape}")


def similarity_weights(x: torch.Tensor) -> torch.Tensor:
    """Row-wise softmax of X Xᵀ: (..., L, d) -> (..., L, L), rows sum to 1."""
    check_tokens("x", x)
    return torch.softmax(x @ x.transpose(-2, -1), dim=-1)


def weighted_sum(weights: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Row i of the result is sum_j weights[i, j] * x[j].

    Shapes: (..., L_q, L_k) and (..., L_k, d) -> (..., L_q, d).
    """
    check_tokens("weights", weights)
    check_tokens("x", x)
    if weights.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"weights {tuple(weights.shape)} has {weights.shape[-1]} columns "
            f"but x {tuple(x.shape)} has {x.shape[-2]} rows"
        )
    return weights @ x


def checked_self_attention(x: torch.Tensor) -> torch.Tensor:
    """Softmax(X Xᵀ) X, with its input checked first."""
    return weighted_sum(similarity_weights(x), x)
    # --8<-- [end:robust]


if __name__ == "__main__":
    # --8<-- [start:use]
    import torch.nn.functional as F

    device = "cuda" if torch.cuda.is_available() else "cpu"

    X = torch.tensor(  # section 1.2's cat, dog and car
        [[1.0, 0.8, 0.1, 0.0], [0.9, 1.0, 0.0, 0.2], [0.0, 0.1, 1.0, 0.9]],
        device=device,
    )  # (3, 4): (L, d)
    Z = self_attention_without_parameters(X)  # (3, 4)
    print(Z.cpu())

    # PyTorch's attention with Q = K = V = X and no scaling computes the same
    theirs = F.scaled_dot_product_attention(X, X, X, scale=1.0)  # (3, 4)
    print(f"max |Z - PyTorch| = {(Z - theirs).abs().max().item():.6f}")
    # --8<-- [end:use]

    # --8<-- [start:batch]
    torch.manual_seed(0)
    x = torch.randn(2, 5, 8).to(device)  # (2, 5, 8): (B, L, d)
    out = self_attention_without_parameters(x)  # (2, 5, 8)
    print(out.shape)
    theirs = F.scaled_dot_product_attention(x, x, x, scale=1.0)  # (2, 5, 8)
    print(f"max |out - PyTorch| = {(out - theirs).abs().max().item():.6f}")
    # --8<-- [end:batch]

    # --8<-- [start:bad_input]
    try:
        weights, values = torch.ones(3, 3), torch.ones(4, 2)
        weighted_sum(weights.to(device), values.to(device))
    except ValueError as error:
        print(error)
    # --8<-- [end:bad_input]
