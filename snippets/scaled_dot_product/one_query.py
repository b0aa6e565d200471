"""The four steps for one query, by hand: chapter 2's "dog bites man"."""

# --8<-- [start:by_hand]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

# chapter 2's hand trace: the query of "bites", and the keys and values
# of dog, bites and man (d_k = d_v = 2)
q_bites = torch.tensor([1.0, 2.0], device=device)  # (2,)
K = torch.tensor([[1.0, 1.0], [0.0, 0.0], [1.0, 0.0]], device=device)  # (3, 2)
V = torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], device=device)  # (3, 2)


def show(t, places=3):
    """A tensor's numbers, rounded, as text."""
    return " ".join(f"{x:.{places}f}" for x in t.tolist())


d_k = K.shape[-1]
scores = K @ q_bites  # (3,): step 1, one dot product per key
scaled = scores / d_k**0.5  # step 2: divide by √d_k = √2
weights = torch.softmax(scaled, dim=-1)  # (3,): step 3, weights that sum to 1
z_bites = weights @ V  # (2,): step 4, weighted sum of the values
print("1. scores: ", show(scores, 2))
print("2. / √2:   ", show(scaled))
print("3. weights:", show(weights))
print("4. output: ", show(z_bites))
ref = F.scaled_dot_product_attention(q_bites[None], K, V)[0]  # (2,)
print("PyTorch:   ", show(ref))
# --8<-- [end:by_hand]
