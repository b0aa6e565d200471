"""Chapter 5's exercises: when view can merge; checks that catch shape bugs."""

# ruff: noqa: E402
# --8<-- [start:can_merge]
import itertools

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def can_merge(t, i):
    """The rule: view can merge dimensions i and i + 1 of t without a copy."""
    if t.size(i) == 1 or t.size(i + 1) == 1:  # a size-1 dimension: always
        return True
    return t.stride(i) == t.stride(i + 1) * t.size(i + 1)


def view_merges(t, i):
    """What view really does: try to merge dimensions i and i + 1."""
    shape = (*t.shape[:i], t.shape[i] * t.shape[i + 1], *t.shape[i + 2 :])
    try:
        t.view(shape)
    except RuntimeError:
        return False
    return True


x = torch.arange(2 * 3 * 5 * 4).reshape(2, 3, 5, 4).to(device)  # (2, 3, 5, 4)
cases = [(p, i) for p in itertools.permutations(range(4)) for i in range(3)]
agree = [
    can_merge(x.permute(p), i) == view_merges(x.permute(p), i) for p, i in cases
]
works = [(p, i) for p, i in cases if view_merges(x.permute(p), i)]
print("rule agrees with view:", sum(agree), "of", len(cases))
print("merges that work:", len(works))
print("all keep their order:", all(p[i + 1] == p[i] + 1 for p, i in works))

# chapter 4's split heads: Q is the first third of in_proj(x),
# (B, L, 3·d_model), then (B, L, d_model) -> (B, L, H, d_k) -> (B, H, L, d_k)
B, L, H, d_k = 2, 5, 3, 4
projected = torch.randn(B, L, 3 * H * d_k).to(device)  # (B, L, 3·H·d_k)
Q, K, V = projected.chunk(3, dim=-1)  # 3 × (B, L, H·d_k)
Q_h = Q.view(B, L, H, d_k).transpose(1, 2)  # (B, H, L, d_k)
print("Q_h", tuple(Q_h.shape), Q_h.stride(), "fold B, H:", can_merge(Q_h, 0))
# --8<-- [end:can_merge]


# --8<-- [start:sum_check]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, H, L = 2, 3, 5
scores = torch.randn(B, H, L, L).to(device)  # (B, H, L, L)
n_rows = B * H * L
print("B * H * L =", n_rows)

ones = torch.ones(B, H, L, device=device)  # (B, H, L)
for dim in (-1, -2):
    weights = torch.softmax(scores, dim=dim)  # (B, H, L, L)
    total = weights.sum().item()
    rows = torch.allclose(weights.sum(dim=-1), ones, atol=1e-6)
    print(
        f"dim={dim}: total == {n_rows}:",
        abs(total - n_rows) < 1e-4,
        "| every row sums to 1:",
        rows,
    )
# --8<-- [end:sum_check]


# --8<-- [start:batch_check]
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model, H = 2, 5, 12, 3
x = torch.randn(B, L, d_model)  # (B, L, d_model)
y = x.clone()
y[1] = torch.randn(L, d_model)  # a different sample 1; sample 0 unchanged
x, y = x.to(device), y.to(device)


def sample_0_is_independent(mha):
    """Does sample 0's output stay the same when only sample 1 changes?"""
    out_x, _ = mha(x, x, x)
    out_y, _ = mha(y, y, y)
    return torch.allclose(out_x[0], out_y[0], atol=1e-5)


for batch_first in (False, True):
    torch.manual_seed(1)
    mha = nn.MultiheadAttention(d_model, H, batch_first=batch_first)
    mha = mha.to(device)
    print(f"batch_first={batch_first}:", sample_0_is_independent(mha))
# --8<-- [end:batch_check]
