"""Why several heads: one row of weights blends what two heads keep apart."""

# --8<-- [start:two_views]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

# "The animal didn't cross the street because it was too tired."
# values V of three of its tokens; the features, made up for the example:
# a thing, alive, a place, a state
tokens = ["animal", "street", "tired"]
V = torch.tensor(
    [
        [1.0, 1.0, 0.0, 0.0],  # animal
        [1.0, 0.0, 1.0, 0.0],  # street
        [0.0, 0.0, 0.0, 1.0],  # tired
    ],
    device=device,
)  # (3, 4)

# two rows of weights the query "it" could use, over animal, street, tired
referent = torch.tensor([1.0, 0.0, 0.0], device=device)  # what "it" is
state = torch.tensor([0.0, 0.0, 1.0], device=device)  # what is said of it
shared = (referent + state) / 2  # (3,): one row has to hold both

print("head 0 reads  ", (referent @ V).cpu())
print("head 1 reads  ", (state @ V).cpu())
print("one row reads ", (shared @ V).cpu())
both = torch.cat([referent @ V, state @ V])  # (8,): two heads, side by side
print("two heads keep", both.cpu())
# --8<-- [end:two_views]
