"""Online softmax: the softmax of a row computed piece by piece."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:two_pieces]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

# chapter 1's tokens: the scores of the query "car" against cat, dog, car
X = torch.tensor(
    [
        [1.0, 0.8, 0.1, 0.0],  # cat
        [0.9, 1.0, 0.0, 0.2],  # dog
        [0.0, 0.1, 1.0, 0.9],  # car
    ],
    device=device,
)  # (3, 4)
s = X[2] @ X.T  # (3,): car · cat, car · dog, car · car
print("scores:", s.round(decimals=2).cpu())

# piece 1: cat, dog. A running max m and a running sum of exp(s - m)
m = s[:2].max()
total = torch.exp(s[:2] - m).sum()
print(f"piece 1: m = {m.item():.2f}, sum = {total.item():.4f}")

# piece 2: car. A larger max arrives: rescale the old sum first
m_new = torch.maximum(m, s[2:].max())
total = total * torch.exp(m - m_new) + torch.exp(s[2:] - m_new).sum()
m = m_new
print(f"piece 2: m = {m.item():.2f}, sum = {total.item():.4f}")

weights = torch.exp(s - m) / total  # (3,)
print("online: ", weights.round(decimals=4).cpu())
print("softmax:", torch.softmax(s, dim=-1).round(decimals=4).cpu())
# --8<-- [end:two_pieces]


# --8<-- [start:any_pieces]
def online_softmax(s, size):
    """Softmax of the 1-D tensor s, reading it `size` numbers at a time."""
    m = torch.tensor(float("-inf"), device=s.device)  # running max
    total = torch.tensor(0.0, device=s.device)  # running sum of exp(s - m)
    for start in range(0, len(s), size):
        piece = s[start : start + size]
        m_new = torch.maximum(m, piece.max())
        total = total * torch.exp(m - m_new) + torch.exp(piece - m_new).sum()
        m = m_new
    return torch.exp(s - m) / total


torch.manual_seed(0)
row = (torch.randn(10) * 5).to(device)  # (10,): 10 scores, a wide spread
for size in [1, 3, 4, 10]:
    diff = (online_softmax(row, size) - torch.softmax(row, -1)).abs().max()
    print(f"pieces of {size:>2}: max |online - softmax| = {diff:.6f}")
# --8<-- [end:any_pieces]

# --8<-- [start:weighted_sum]
# the output of "car": the weights times the values (V = X, as in chapter 1)
V = X
m = s[:2].max()  # piece 1: cat, dog
total = torch.exp(s[:2] - m).sum()
out = torch.exp(s[:2] - m) @ V[:2]  # (4,): an unnormalised weighted sum
m_new = torch.maximum(m, s[2:].max())  # piece 2: car
scale = torch.exp(m - m_new)  # exp(m_old - m_new) rescales both
total = total * scale + torch.exp(s[2:] - m_new).sum()
out = out * scale + torch.exp(s[2:] - m_new) @ V[2:]
out = out / total  # divide once, at the end
print("online:     ", out.round(decimals=4).cpu())
print("softmax @ V:", (torch.softmax(s, -1) @ V).round(decimals=4).cpu())
# --8<-- [end:weighted_sum]
