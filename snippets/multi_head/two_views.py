"""Why several heads: one row of weights blends what two heads keep apart."""

# --8<-- [start:two_views]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

# chapter 1's three tokens and their vectors, used here as the values V
tokens = ["cat", "dog", "car"]
V = torch.tensor(
    [
        [1.0, 0.8, 0.1, 0.0],  # cat
        [0.9, 1.0, 0.0, 0.2],  # dog
        [0.0, 0.1, 1.0, 0.9],  # car
    ],
    device=device,
)  # (3, 4)

# two rows of weights the query "dog" could use, over cat, dog, car
similar = torch.tensor([1.0, 0.0, 0.0], device=device)  # the similar token
following = torch.tensor([0.0, 0.0, 1.0], device=device)  # the next token
shared = (similar + following) / 2  # (3,): one row has to hold both

print("head 0 reads  ", (similar @ V).cpu())
print("head 1 reads  ", (following @ V).cpu())
print("one row reads ", (shared @ V).cpu())
both = torch.cat([similar @ V, following @ V])  # (8,): two heads, side by side
print("two heads keep", both.cpu())
# --8<-- [end:two_views]
