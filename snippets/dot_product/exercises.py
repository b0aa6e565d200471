"""Chapter 1's exercises: shifting and scaling scores; cosine; token order."""

# --8<-- [start:shift_and_scale]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

# the chapter's X: one row per token, as in section 1.2
tokens = ["cat", "dog", "car"]
X = torch.tensor(
    [[1.0, 0.8, 0.1, 0.0], [0.9, 1.0, 0.0, 0.2], [0.0, 0.1, 1.0, 0.9]],
    device=device,
)  # (3, 4): (L, d)
S = X @ X.T  # (3, 3): (L, L)
A = torch.softmax(S, dim=-1)  # (3, 3)


def row(W, i=0):
    """Row i of a weight matrix, two decimals each."""
    return " ".join(f"{w:.2f}" for w in W[i].tolist())


# subtract one number from each whole row: that row's largest score
shifted = torch.softmax(S - S.amax(dim=-1, keepdim=True), dim=-1)  # (3, 3)
print(f"max change after the shift: {(shifted - A).abs().max():.6f}")

# every score halved or doubled: the cat row
print("S / 2:", row(torch.softmax(S / 2, dim=-1)))
print("S    :", row(A))
print("2 * S:", row(torch.softmax(2 * S, dim=-1)))
# --8<-- [end:shift_and_scale]

# --8<-- [start:cosine_weights]
# cosine similarity: divide every row of X by its length first
X_unit = X / X.norm(dim=-1, keepdim=True)  # (3, 4)
A_cos = torch.softmax(X_unit @ X_unit.T, dim=-1)  # (3, 3)
print("dot product, cat row:", row(A))
print("cosine,      cat row:", row(A_cos))
# for each token, the token it gives the most weight to
top, top_cos = A.argmax(dim=-1).tolist(), A_cos.argmax(dim=-1).tolist()
print("dot product, most weight:", [tokens[i] for i in top])
print("cosine,      most weight:", [tokens[i] for i in top_cos])
# --8<-- [end:cosine_weights]


# --8<-- [start:word_order]
def attend(x):
    """Softmax(X Xᵀ) X for one sequence of shape (L, d)."""
    return torch.softmax(x @ x.T, dim=-1) @ x


Z = attend(X)  # (3, 4)
order = torch.tensor([2, 0, 1], device=device)  # car, cat, dog
print("new order:", [tokens[i] for i in order.tolist()])
diff = (attend(X[order]) - Z[order]).abs().max().item()
print(f"max |Z of the new order - rows of Z reordered| = {diff:.6f}")
# --8<-- [end:word_order]
