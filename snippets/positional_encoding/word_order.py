"""Without positions, attention cannot tell "dog bites man" from the reverse."""

# --8<-- [start:no_positions]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
vocab = {"dog": 0, "bites": 1, "man": 2}
d_model = 16
embed = nn.Embedding(len(vocab), d_model).to(device)
mha = nn.MultiheadAttention(d_model, num_heads=4, batch_first=True).to(device)


def encode(tokens, positions=None):
    """Self-attention over one sentence: (L,) tokens -> (L, d_model)."""
    ids = torch.tensor([vocab[t] for t in tokens], device=device)  # (L,)
    x = embed(ids)  # (L, d_model)
    if positions is not None:
        x = x + positions[: len(tokens)]  # slot i gets vector i
    out, _ = mha(x[None], x[None], x[None])
    return out[0]


a = ["dog", "bites", "man"]
b = ["man", "bites", "dog"]
with torch.no_grad():
    out_a, out_b = encode(a), encode(b)  # 2 × (3, d_model)


def compare(out_a, out_b):
    """Same vector for each token in both sentences? Same average?"""
    for token in vocab:
        row_a, row_b = out_a[a.index(token)], out_b[b.index(token)]
        same = torch.allclose(row_a, row_b, atol=1e-6)
        print(f"{token:>5}: same vector", same)
    same = torch.allclose(out_a.mean(dim=0), out_b.mean(dim=0), atol=1e-6)
    print("sentence average: same", same)


compare(out_a, out_b)
# --8<-- [end:no_positions]

# --8<-- [start:with_positions]
# one vector per slot: any encoding will do, even a random one
positions = torch.randn(8, d_model).to(device)  # (8, d_model)
with torch.no_grad():
    compare(encode(a, positions), encode(b, positions))
# --8<-- [end:with_positions]
