"""Q4: a large attention weight is not the same as a large contribution."""

# --8<-- [start:contribution]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

weights = torch.tensor([0.7, 0.3], device=device)  # (2,): one row of A
V = torch.tensor([[0.01, 0.0], [3.0, 4.0]], device=device)  # V[0] is tiny

parts = weights[:, None] * V  # (2, 2): what each token adds
for j in range(2):
    w, size = weights[j].item(), parts[j].norm().item()
    print(f"token {j}: weight {w:.2f}, adds a vector of length {size:.3f}")
print("output row:", (weights @ V).cpu())
# --8<-- [end:contribution]
