"""One query traced by hand: chapter 1's cat, dog and car, projected."""

# --8<-- [start:by_hand]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

tokens = ["cat", "dog", "car"]
X = torch.tensor(  # chapter 1's X: one row per token, 4 features
    [[1.0, 0.8, 0.1, 0.0], [0.9, 1.0, 0.0, 0.2], [0.0, 0.1, 1.0, 0.9]],
    device=device,
)  # (3, 4)
# hand-picked (4, 2) matrices; a real model learns them
W_Q = torch.tensor([[1.0, 0], [0, 0], [0, 1], [0, 0]], device=device)
W_K = torch.tensor([[0.0, 0], [1, 0], [0, 0], [0, 1]], device=device)
W_V = torch.tensor([[1.0, 0], [1, 0], [0, 1], [0, 1]], device=device)
Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # 3 × (3, 2)


def show(t, places=2):
    """A tensor's numbers, rounded, as text."""
    return " ".join(f"{x:.{places}f}" for x in t.tolist())


q_cat = Q[0]  # (2,): what "cat" looks for
print("q_cat:", show(q_cat))
for i, name in enumerate(tokens):
    print(f"k_{name}:", show(K[i]), f"  v_{name}:", show(V[i]))
scores = torch.stack([q_cat @ k for k in K])  # (3,): one dot product per key
weights = torch.softmax(scores, dim=-1)  # (3,)
# the output: the values, each times its weight, added up
z_cat = weights[0] * V[0] + weights[1] * V[1] + weights[2] * V[2]  # (2,)
print("scores of cat: ", show(scores))
print("weights of cat:", show(weights, 3))
print("output of cat: ", show(z_cat, 3))
# --8<-- [end:by_hand]

# --8<-- [start:matrix_form]
S = Q @ K.T  # (3, 3): every query against every key at once
print(S.cpu())
print(torch.allclose(S[0], scores))  # row 0 is the cat trace above
# --8<-- [end:matrix_form]
