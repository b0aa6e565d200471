"""Why softmax: smooth weights that pass gradients; a hard max passes none."""

# --8<-- [start:soft]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

scores = torch.tensor([2.0, 1.0, 0.5, -1.0], device=device, requires_grad=True)
u = torch.tensor([1.0, -2.0, 0.5, 3.0], device=device)  # gradient from above

soft = torch.softmax(scores, dim=-1)  # (4,)
print(", ".join(f"{w:.4f}" for w in soft.tolist()))
print(f"sum {soft.sum().item():.4f}")  # all positive, and they sum to 1
(soft * u).sum().backward()
print(scores.grad.cpu())  # every score gets a gradient
# --8<-- [end:soft]

# --8<-- [start:hard]
hard = F.one_hot(scores.argmax(), num_classes=4).to(scores.dtype)  # (4,)
print(hard.cpu(), hard.requires_grad)  # argmax is not differentiable: no graph
try:
    (hard * u).sum().backward()
except RuntimeError as error:
    print("RuntimeError:", error)
# --8<-- [end:hard]

# --8<-- [start:temperature]
# softmax(s / T) tends to the one-hot argmax as T -> 0, and its gradient to 0
# float64: the gradients become smaller than float32 can resolve next to 1
s = scores.detach().double().requires_grad_()
for T in (1.0, 0.3, 0.1, 0.05):
    s.grad = None
    weights = torch.softmax(s / T, dim=-1)  # (4,)
    (weights * u.double()).sum().backward()
    shown = ", ".join(f"{w:.3f}" for w in weights.tolist())
    norm = s.grad.norm().item()
    print(f"T={T:<4}  weights=[{shown}]  |grad|={norm:.1e}")
# --8<-- [end:temperature]
