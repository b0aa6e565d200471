"""A verb looking for its subject: hand-made W^Q, W^K, W^V, traced by hand."""

# --8<-- [start:tokens]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

tokens = ["dog", "bites", "man"]
# the 5 features (columns) of X, named
noun, verb, subject, animal, human = range(5)
X = torch.tensor(
    [
        [1.0, 0, 1, 1, 0],  # dog: a noun, the subject, an animal
        [0.0, 1, 0, 0, 0],  # bites: a verb
        [1.0, 0, 0, 0, 1],  # man: a noun, a human
    ]
).to(device)  # (3, 5): (L, d_model)

# each matrix: 5 rows (the features of X), 2 named columns
W_Q = torch.zeros(5, 2)  # query columns: "wants a noun", "wants the subject"
W_Q[verb] = torch.tensor([1.0, 2.0])  # only the verb asks, for its subject
W_K = torch.zeros(5, 2)  # key columns: "is a noun", "is the subject"
W_K[noun, 0] = 1.0
W_K[subject, 1] = 1.0
W_V = torch.zeros(5, 2)  # value columns: "animal", "human"
W_V[animal, 0] = 1.0
W_V[human, 1] = 1.0
W_Q, W_K, W_V = W_Q.to(device), W_K.to(device), W_V.to(device)

Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # 3 × (3, 2)


def show(t, places=2):
    """A tensor's numbers, rounded, as text."""
    return " ".join(f"{x:.{places}f}" for x in t.tolist())


print("q_bites:", show(Q[1]))
for i, name in enumerate(tokens):
    print(f"k_{name + ':':<7}", show(K[i]), f"  v_{name + ':':<7}", show(V[i]))
# --8<-- [end:tokens]

# --8<-- [start:trace]
q_bites = Q[1]  # (2,): what "bites" looks for
scores = torch.stack([q_bites @ k for k in K])  # (3,): one per key
weights = torch.softmax(scores, dim=-1)  # (3,)
# the output: the values, each times its weight, added up
z_bites = weights[0] * V[0] + weights[1] * V[1] + weights[2] * V[2]  # (2,)
print("scores of bites: ", show(scores))
print("weights of bites:", show(weights, 3))
print("output of bites: ", show(z_bites, 3))
# chapter 1's scores, X Xᵀ without projections: bites matches itself
print("X Xᵀ row of bites:", show(X[1] @ X.T))
# --8<-- [end:trace]

# --8<-- [start:matrix_form]
S = Q @ K.T  # (3, 2) @ (2, 3) -> (3, 3): every query against every key
print(S.cpu())
Z = torch.softmax(S, dim=-1) @ V  # (3, 2)
print("row of bites in Z:", show(Z[1], 3))  # the trace above
# --8<-- [end:matrix_form]

# --8<-- [start:swap]
# "man bites dog": the same matrices, the subject feature now on man
X2 = X.clone()
X2[:, subject] = torch.tensor([0.0, 0.0, 1.0]).to(device)
Q2, K2, V2 = X2 @ W_Q, X2 @ W_K, X2 @ W_V  # 3 × (3, 2)
weights2 = torch.softmax(K2 @ Q2[1], dim=-1)  # (3,): bites' weights
print("weights of bites:", show(weights2, 3))
print("output of bites: ", show(weights2 @ V2, 3))
# --8<-- [end:swap]
