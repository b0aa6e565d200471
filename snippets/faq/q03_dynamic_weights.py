"""Q3: a Linear layer's weights are fixed; attention's depend on the input."""

# --8<-- [start:dynamic]
import torch
from torch import nn
from torch.autograd.functional import jacobian

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
d_model = d_k = 8  # one head, as wide as the model
linear = nn.Linear(d_model, d_model).to(device)
W_Q, W_K, W_V = (
    torch.randn(d_model, d_k).to(device) / d_model**0.5 for _ in range(3)
)


def attention(X):
    A = torch.softmax((X @ W_Q) @ (X @ W_K).T / d_k**0.5, dim=-1)  # (5, 5)
    return A, A @ (X @ W_V)


X1 = torch.randn(5, d_model).to(device)  # (5, d_model)
X2 = X1.clone()
X2[4] = torch.randn(d_model).to(device)  # change only the last token


# J[i, :, j, :]: the matrix by which output row i answers a small change of
# input row j. Autograd computes it without being told how the layer works.
def jacobians(f):
    return jacobian(f, X1), jacobian(f, X2)


def report(name, J1, J2):
    same = torch.allclose(J1, J2, atol=1e-6)
    sees = bool(J1[0, :, 4].abs().max() > 1e-6)  # row 4 reaches output row 0?
    print(f"{name:<9}  same for X1, X2: {same!s:<5}  row 0 sees row 4: {sees}")


J_lin1, J_lin2 = jacobians(linear)  # 2 × (5, d_model, 5, d_model)
J_att1, J_att2 = jacobians(lambda X: attention(X)[1])
report("Linear", J_lin1, J_lin2)
report("attention", J_att1, J_att2)
is_W = torch.allclose(J_lin1[0, :, 0], linear.weight, atol=1e-6)
print("Linear: the matrix is linear.weight:", is_W)
A1, A2 = attention(X1)[0], attention(X2)[0]
print("attention: the weights A changed:  ", not torch.allclose(A1, A2))
# --8<-- [end:dynamic]
