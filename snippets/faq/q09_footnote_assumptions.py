"""Q9: the scale folds into W^Q; footnote 4 holds only under its assumptions."""

# --8<-- [start:fold]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model, d_k = 6, 32, 16
X = torch.randn(L, d_model).to(device)  # (L, d_model)
W_Q, W_K, W_V = torch.randn(3, d_model, d_k).to(device) / d_model**0.5
Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # 3 × (L, d_k)

with_scale = F.scaled_dot_product_attention(Q, K, V)  # divides by √d_k
# no scaling in the attention, but W^Q divided by √d_k once, ahead of time
Q_folded = X @ (W_Q / d_k**0.5)  # (L, d_k)
folded = F.scaled_dot_product_attention(Q_folded, K, V, scale=1.0)
same = torch.allclose(with_scale, folded, atol=1e-5)
print("scale folded into W^Q gives the same output:", same)
# --8<-- [end:fold]

# --8<-- [start:assumptions]
g = torch.Generator().manual_seed(0)
d_k, n_pairs = 64, 20000
q, k = torch.randn(2, n_pairs, d_k, generator=g, dtype=torch.float64)
q, k = q.to(device), k.to(device)
cases = {
    "footnote: independent, mean 0, var 1": (q, k),
    "components with variance 0.25": (0.5 * q, 0.5 * k),
    "q and k equal (not independent)": (q, q),
}
for name, (a, b) in cases.items():
    dots = (a * b).sum(dim=-1)  # (n_pairs,)
    mean, var = dots.mean().item(), dots.var().item()
    print(f"{name:<37} mean {mean:6.2f}  variance {var:6.1f}")
# --8<-- [end:assumptions]

# --8<-- [start:training]
# The two starting points of the first block, one optimiser step each:
# "scaled" starts from W^Q and divides by √d_k, "folded" starts from W^Q / √d_k.
# W^K and W^V get the same gradients in both, so only W^Q is trained here.
scale = K.shape[-1] ** 0.5  # √d_k = 4: the first block's d_k = 16
target = torch.randn(L, V.shape[-1], generator=g).to(device)  # (L, 16)


def one_step(W, divide_by, optimizer, lr):
    """Scores before and after one step on W, and the gradient of W."""
    W = W.clone().requires_grad_()
    before = (X @ W) @ K.T / divide_by  # (L, L)
    out = torch.softmax(before, dim=-1) @ V  # (L, 16)
    ((out - target) ** 2).mean().backward()
    optimizer([W], lr=lr).step()
    with torch.no_grad():
        return before.detach(), (X @ W) @ K.T / divide_by, W.grad


scores_f, scores_s = (X @ (W_Q / scale)) @ K.T, (X @ W_Q) @ K.T / scale
same = torch.allclose(scores_f, scores_s, atol=1e-5)
print("before the step, same scores:", same)
print("one step, folded / scaled:  gradient  score change  same scores after")
steps = [("SGD", torch.optim.SGD, 0.1), ("Adam", torch.optim.Adam, 0.01)]
for name, optimizer, lr in steps:
    before_s, after_s, grad_s = one_step(W_Q, scale, optimizer, lr)
    before_f, after_f, grad_f = one_step(W_Q / scale, 1.0, optimizer, lr)
    grad = (grad_f.norm() / grad_s.norm()).item()
    moved = ((after_f - before_f).norm() / (after_s - before_s).norm()).item()
    same = torch.allclose(after_f, after_s, atol=1e-5)
    print(f"{name:<26}{grad:>10.2f}{moved:>14.2f}  {same}")
# --8<-- [end:training]
