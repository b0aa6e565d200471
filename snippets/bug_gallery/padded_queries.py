"""Bug: padded keys are masked, but padded queries still count in a mean.

Fixed in lanterndata/lantern_extras, pull request #91 (mean pooling that
uses the attention mask); the same problem, in a user's own mean pooling, in
huggingface/transformers, issue #17463.
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L, d_model = 4, 8
tokens = torch.randn(2, d_model).to(device)  # (2, d_model): one sequence
x = torch.zeros(1, L, d_model, device=device)  # (1, L, d_model): right-padded
x[:, :2] = tokens
pad = torch.tensor([[False, False, True, True]], device=device)  # (B, L)


def encode(x, pad):
    keep = ~pad[:, None, :]  # no query may see a padded key
    return F.scaled_dot_product_attention(x, x, x, attn_mask=keep)


def embed_buggy(x, pad):
    out = encode(x, pad)  # its padded rows are not zero
    return out.mean(dim=1)  # bug: averages the padded rows too


# --8<-- [end:bug]


# --8<-- [start:check]
def check(embed):
    padded = embed(x, pad)[0]  # (d_model,)
    no_pad = torch.zeros(1, 2, dtype=torch.bool, device=device)  # (1, 2)
    alone = embed(tokens[None], no_pad)[0]  # (d_model,)
    diff = (padded - alone).abs().max().item()
    print(f"max |padded - alone| = {diff:.4f}")


check(embed_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def embed_fixed(x, pad):
    out = encode(x, pad)
    real = (~pad)[..., None].to(out.dtype)  # 1 for real tokens
    return (out * real).sum(dim=1) / real.sum(dim=1)  # mean of real rows


check(embed_fixed)
# --8<-- [end:fix]
