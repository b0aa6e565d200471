"""Bug: position ids counted from the padding in a left-padded batch.

Reported in TransformerLensOrg/TransformerLens, issue #1609; fixed in pull
request #1610.
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
vocab, max_len, d_model = 10, 8, 8
tok_emb = torch.randn(vocab, d_model).to(device)  # (vocab, d_model)
pos_emb = torch.randn(max_len, d_model).to(device)  # learned positions
tokens = torch.tensor([[5, 3, 7, 2], [0, 0, 4, 6]], device=device)  # (2, 4)
pad = tokens == 0  # id 0 is <pad>: the second prompt is left-padded


def forward(tokens, pad, positions):
    x = tok_emb[tokens] + pos_emb[positions]  # (B, L, d_model)
    L = tokens.size(1)
    causal = torch.ones(L, L, dtype=torch.bool, device=device).tril()  # (L, L)
    eye = torch.eye(L, dtype=torch.bool, device=device)
    keep = causal & ~pad[:, None, :] | eye  # (B, L, L), True = may attend
    return F.scaled_dot_product_attention(x, x, x, attn_mask=keep)


def positions_buggy(pad):
    B, L = pad.shape
    return torch.arange(L, device=pad.device).expand(B, L)  # bug


# --8<-- [end:bug]


# --8<-- [start:check]
def check(positions):
    out = forward(tokens, pad, positions(pad))[1, 2:]  # the real tokens
    alone = tokens[1:, 2:]  # (1, 2): the same prompt, no padding
    no_pad = torch.zeros_like(alone, dtype=torch.bool)
    expected = forward(alone, no_pad, positions(no_pad))[0]
    print("position ids:", positions(pad).tolist())
    diff = (out - expected).abs().max().item()
    print(f"max |padded - alone| = {diff:.4f}")


check(positions_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def positions_fixed(pad):
    positions = (~pad).cumsum(dim=-1) - 1  # count real tokens only
    return positions.masked_fill(pad, 0)  # padding: any valid id


check(positions_fixed)
# --8<-- [end:fix]
