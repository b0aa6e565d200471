"""Learned absolute positions: one trainable row per position, nn.Embedding."""

# --8<-- [start:table]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
max_len, d_model = 512, 64
pos_table = nn.Embedding(max_len, d_model).to(device)  # row p: position p
params = sum(p.numel() for p in pos_table.parameters())
print(f"{max_len} x {d_model} = {params:,} parameters")


def add_positions(x, table):
    """x (B, L, d_model) plus rows 0 .. L-1 of the position table."""
    L = x.shape[-2]
    if L > table.num_embeddings:  # position L - 1 has no row
        raise ValueError(
            f"x {tuple(x.shape)} has {L} positions, but the "
            f"table has only {table.num_embeddings} rows"
        )
    return x + table(torch.arange(L, device=x.device))


x = torch.randn(2, 10, d_model).to(device)  # (2, 10, d_model)
print(tuple(add_positions(x, pos_table).shape))
try:
    add_positions(torch.randn(1, 600, d_model).to(device), pos_table)
except ValueError as error:
    print("ValueError:", error)
# --8<-- [end:table]


# --8<-- [start:robust]
def check_add_positions(x, table):
    """Raise unless x is float (B, L, d_model) or (L, d_model), table an
    nn.Embedding of width d_model."""
    if not (isinstance(table, nn.Embedding) and torch.is_tensor(x)):
        kinds = f"{type(x).__name__}, {type(table).__name__}"
        raise TypeError(f"need (x tensor, table nn.Embedding), got {kinds}")
    shape, d_model = tuple(x.shape), table.embedding_dim
    if not x.is_floating_point():
        raise TypeError(f"x {shape} must be float embeddings, got {x.dtype}")
    if x.ndim not in (2, 3) or shape[-1] != d_model:
        raise ValueError(
            f"x {shape} must be (B, L, d_model) or (L, d_model), "
            f"d_model = {d_model}"
        )


def checked_add_positions(x, table):
    """add_positions after checking the kinds and shapes of its arguments."""
    check_add_positions(x, table)
    return add_positions(x, table)


try:
    ids = torch.tensor([[3, 1, 4]], device=device)  # token ids, not vectors
    checked_add_positions(ids, pos_table)
except TypeError as error:
    print("TypeError:", error)

# without a check, nn.Embedding on the CPU names no shape for a missing row
try:
    nn.Embedding(max_len, d_model)(torch.tensor([max_len]))
except IndexError as error:
    print("IndexError:", error)
# --8<-- [end:robust]

# --8<-- [start:untrained_rows]
train_len = 8  # every training sequence has 8 tokens
x = torch.randn(4, train_len, d_model).to(device)  # (4, train_len, d_model)
loss = add_positions(x, pos_table).pow(2).mean()  # any loss will do
loss.backward()
# one flag per row: does it have a gradient?
has_grad = pos_table.weight.grad.abs().sum(dim=-1) > 0  # (max_len,)
rows = has_grad.nonzero().flatten()
print(
    f"rows with a gradient: {rows.numel()} of {max_len}, "
    f"positions {rows.min().item()}-{rows.max().item()}"
)
# --8<-- [end:untrained_rows]
