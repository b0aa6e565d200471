"""Chapter 7's exercises: copying without positions; sinusoidal positions."""

# ruff: noqa: E402
import torch
from torch import nn

from snippets.learned_attention.reversal import (
    L,
    Reverser,
    device,
    evaluate,
    make_batch,
    train,
)

# as the page's blocks before the exercises left them
x_test = make_batch(1000, torch.Generator().manual_seed(1))
rows = torch.arange(L, device=device)
right = torch.arange(L - 1, -1, -1, device=device)


# --8<-- [start:copy]
def copy(x):
    """The target: the sequence itself."""
    return x


torch.manual_seed(1)
copier = Reverser(positions=False).to(device)
copy_losses, copy_log = train(copier, x_test, target=copy)
accuracy, copy_weights = evaluate(copier, x_test, target=copy)
print(f"copying without positions, test accuracy: {accuracy:.3f}")
# --8<-- [end:copy]


# --8<-- [start:sinusoidal]
def sinusoidal_encoding(length, d_model):
    """Chapter 6.2: PE[pos, 2p] = sin(pos ω_p), PE[pos, 2p+1] = cos(pos ω_p)."""
    pos = torch.arange(length, device=device, dtype=torch.float32)  # (L,)
    two_p = torch.arange(0, d_model, 2, device=device, dtype=torch.float32)
    angle = pos[:, None] * 10000.0 ** (-two_p / d_model)  # (length, d_model/2)
    pe = torch.empty(length, d_model, device=device)  # (L, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


torch.manual_seed(1)
fixed = Reverser().to(device)
fixed.pos = nn.Embedding.from_pretrained(sinusoidal_encoding(L, 32))  # frozen
fixed_losses, fixed_log = train(fixed, x_test)
accuracy, fixed_weights = evaluate(fixed, x_test)
print(f"sinusoidal positions, test accuracy: {accuracy:.3f}")
on_diagonal = (fixed_weights.argmax(dim=-1) == right).all(dim=-1)  # (1000,)
print(f"anti-diagonal argmax: {on_diagonal.sum()} of 1000 sequences")
on_right = fixed_weights[:, rows, right]  # (1000, L)
print(f"mean weight on the right key: {on_right.mean():.2f}")
# --8<-- [end:sinusoidal]
