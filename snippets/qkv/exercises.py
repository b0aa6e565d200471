"""Chapter 2's exercises: what mixes tokens, symmetry, alignment of K and V."""

# ruff: noqa: E402

# --8<-- [start:one_token]
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model, d_k, d_v = 4, 8, 6, 5
X = torch.randn(L, d_model).to(device)  # (L, d_model)
w_q = nn.Linear(d_model, d_k, bias=False).to(device)
w_k = nn.Linear(d_model, d_k, bias=False).to(device)
w_v = nn.Linear(d_model, d_v, bias=False).to(device)

X2 = X.clone()
X2[3] = torch.randn(d_model).to(device)  # a different token at position 3


def rows_changed(a, b):
    """Indices of the rows where a and b differ by more than 1e-5."""
    same = torch.isclose(a, b, rtol=0, atol=1e-5).all(dim=-1)
    return torch.nonzero(~same).flatten().tolist()


with torch.no_grad():
    Q, K, V = w_q(X), w_k(X), w_v(X)
    Q2, K2, V2 = w_q(X2), w_k(X2), w_v(X2)
    Z = F.scaled_dot_product_attention(Q, K, V)  # (L, d_v)
    Z2 = F.scaled_dot_product_attention(Q2, K2, V2)
print("rows of Q that changed:", rows_changed(Q, Q2))
print("rows of Z that changed:", rows_changed(Z, Z2))
# --8<-- [end:one_token]

# --8<-- [start:shared]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model, d_k = 4, 8, 6
X = torch.randn(L, d_model).to(device)  # (L, d_model)
w_q = nn.Linear(d_model, d_k, bias=False).to(device)

with torch.no_grad():
    Q = K = w_q(X)  # (L, d_k); W^Q = W^K: one matrix for both
    S = Q @ K.T / d_k**0.5  # (L, L)
    A = torch.softmax(S, dim=-1)  # (L, L)
print(f"S[0, 1] = {S[0, 1].item():.3f}, S[1, 0] = {S[1, 0].item():.3f}")
print(f"A[0, 1] = {A[0, 1].item():.3f}, A[1, 0] = {A[1, 0].item():.3f}")
print("row sums of A:   ", " ".join(f"{t:.2f}" for t in A.sum(dim=-1).tolist()))
print("column sums of A:", " ".join(f"{t:.2f}" for t in A.sum(dim=0).tolist()))
# --8<-- [end:shared]

# --8<-- [start:reorder]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

g = torch.Generator().manual_seed(0)
Q = torch.randn(3, 6, generator=g).to(device)  # (3, 6): 3 queries
K = torch.randn(7, 6, generator=g).to(device)  # (7, 6): 7 keys ...
V = torch.randn(7, 5, generator=g).to(device)  # (7, 5): ... and their 7 values

out = F.scaled_dot_product_attention(Q, K, V)  # (3, 5)
both = F.scaled_dot_product_attention(Q, K.flip(0), V.flip(0))  # same order
only_v = F.scaled_dot_product_attention(Q, K, V.flip(0))  # V out of step
print(f"K and V reversed together: max change {(both - out).abs().max():.4f}")
print(f"only V reversed:           max change {(only_v - out).abs().max():.4f}")
# --8<-- [end:reorder]

# --8<-- [start:separate]
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L_q, L_k, d_model, d_k, d_v = 3, 7, 8, 6, 5
x = torch.randn(L_q, d_model).to(device)  # (L_q, d_model): the queries
a = torch.randn(L_k, d_model).to(device)  # (L_k, d_model): keys from a ...
b = torch.randn(L_k, d_model).to(device)  # (L_k, d_model): ... values from b
w_q = nn.Linear(d_model, d_k, bias=False).to(device)
w_k = nn.Linear(d_model, d_k, bias=False).to(device)
w_v = nn.Linear(d_model, d_v, bias=False).to(device)

with torch.no_grad():
    Q, K, V = w_q(x), w_k(a), w_v(b)  # K and V: two tensors, same length
    A = torch.softmax(Q @ K.T / d_k**0.5, dim=-1)  # (L_q, L_k)
    out = F.scaled_dot_product_attention(Q, K, V)  # (L_q, d_v)
    print("output", tuple(out.shape))
    print(f"max |out - A V| = {(out - A @ V).abs().max().item():.6f}")

    V_short = w_v(b[:5])  # (5, d_v): 5 values for 7 keys
    try:
        A @ V_short
    except RuntimeError as error:
        print("RuntimeError:", error)
    try:
        F.scaled_dot_product_attention(Q, K, V_short)
    except RuntimeError as error:
        print("scaled_dot_product_attention:", type(error).__name__)
# --8<-- [end:separate]
