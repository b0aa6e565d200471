"""Bug: a query row with every key masked gives NaN, and the NaN spreads.

Reported in pytorch/pytorch, issues #103749 and #110213; cleared in
explosion/curated-transformers, pull request #360.
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, L, d_model = 2, 4, 8
x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)
# sequence 1 is left-padded: its first two positions are padding
pad = torch.tensor([[False] * 4, [True, True, False, False]], device=device)
causal = torch.ones(L, L, dtype=torch.bool, device=device).tril()  # (L, L)
keep_buggy = causal & ~pad[:, None, :]  # (B, L, L), True = may attend


def attention(x, keep):
    scores = x @ x.transpose(-2, -1) / x.size(-1) ** 0.5  # (B, L, L)
    scores = scores.masked_fill(~keep, float("-inf"))  # (B, L, L)
    return scores.softmax(dim=-1) @ x  # a row of -inf: -inf - (-inf) = NaN


# --8<-- [end:bug]


# --8<-- [start:check]
def check(keep):
    out1 = attention(x, keep)  # (B, L, d_model): layer 1
    out2 = attention(out1, keep)  # (B, L, d_model): reads layer 1's output
    for name, out in ("layer 1", out1), ("layer 2", out2):
        rows = [
            out[b].isnan().any(dim=-1).nonzero().flatten().tolist()
            for b in range(B)
        ]
        print(f"{name}, rows with NaN per sequence: {rows}")
    # the two real tokens of sequence 1, run alone without padding
    alone = x[1:, 2:]  # (1, 2, d_model)
    for _ in range(2):
        alone = F.scaled_dot_product_attention(
            alone, alone, alone, is_causal=True
        )
    same = torch.allclose(out2[1:, 2:], alone, atol=1e-5)
    print("real tokens match the sequence run alone:", same)


check(keep_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
# every query may at least see itself, so no row is fully masked;
# real tokens still never see the padding
eye = torch.eye(L, dtype=torch.bool, device=device)  # (L, L)
keep_fixed = keep_buggy | eye  # (B, L, L)
check(keep_fixed)
# --8<-- [end:fix]
