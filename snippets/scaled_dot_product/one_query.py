"""The four steps for one query, by hand: chapter 2's cat, dog and car."""

# --8<-- [start:by_hand]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

# chapter 2's hand trace: the query of "cat", and the keys and values
# of cat, dog and car (d_k = d_v = 2)
q_cat = torch.tensor([1.0, 0.1], device=device)  # (2,)
K = torch.tensor([[0.8, 0.0], [1.0, 0.2], [0.1, 0.9]], device=device)  # (3, 2)
V = torch.tensor([[1.8, 0.1], [1.9, 0.2], [0.1, 1.9]], device=device)  # (3, 2)


def show(t, places=3):
    """A tensor's numbers, rounded, as text."""
    return " ".join(f"{x:.{places}f}" for x in t.tolist())


d_k = K.shape[-1]
scores = K @ q_cat  # (3,): step 1, one dot product per key
scaled = scores / d_k**0.5  # step 2: divide by √d_k = √2
weights = torch.softmax(scaled, dim=-1)  # (3,): step 3, weights that sum to 1
z_cat = weights @ V  # (2,): step 4, weighted sum of the values
print("1. scores: ", show(scores, 2))
print("2. / √2:   ", show(scaled))
print("3. weights:", show(weights))
print("4. output: ", show(z_cat))
ref = F.scaled_dot_product_attention(q_cat[None], K, V)[0]  # (2,)
print("PyTorch:   ", show(ref))
# --8<-- [end:by_hand]
