"""Q3: a Linear layer's weights are fixed; attention's depend on the input."""

# --8<-- [start:dynamic]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
d = 8
linear = nn.Linear(d, d).to(device)
W_Q, W_K, W_V = (torch.randn(d, d).to(device) / d**0.5 for _ in range(3))


def attention(X):
    A = torch.softmax((X @ W_Q) @ (X @ W_K).T / d**0.5, dim=-1)
    return A, A @ (X @ W_V)


X1 = torch.randn(5, d).to(device)
X2 = X1.clone()
X2[4] = torch.randn(d).to(device)  # change only the last token

A1, out1 = attention(X1)
A2, out2 = attention(X2)
same = torch.allclose(linear(X1[0]), linear(X2[0]))
print("Linear: row 0 unchanged   ", same)
print("attention: weights changed", not torch.allclose(A1, A2))
print("attention: row 0 changed  ", not torch.allclose(out1[0], out2[0]))
# --8<-- [end:dynamic]
