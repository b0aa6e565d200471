"""Bug: an additive float mask (0 = keep, a huge negative = hide) cast to bool.

Fixed in huggingface/transformers, pull request #38094 (Llama 4, SDPA path).
"""

# --8<-- [start:bug]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
B, H, L, d_k = 1, 2, 4, 8
q, k, v = (torch.randn(B, H, L, d_k).to(device) for _ in range(3))
pad = torch.tensor([[False, False, False, True]], device=device)  # (B, L)
# the additive form: 0 where a key may be seen, the dtype's minimum where not
bias = torch.zeros(B, 1, 1, L, device=device)  # (B, 1, 1, L)
bias = bias.masked_fill(pad[:, None, None, :], torch.finfo(q.dtype).min)


def attend_buggy(q, k, v, bias):
    return F.scaled_dot_product_attention(
        q,
        k,
        v,
        attn_mask=bias.bool(),  # bug: 0 -> False, min -> True
    )


# --8<-- [end:bug]


# --8<-- [start:check]
def check(attend):
    keep = ~pad[:, None, None, :]  # True = may attend, (B, 1, 1, L)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    diff = (attend(q, k, v, bias) - reference).abs().max().item()
    print(f"max |out - sdpa with the padding mask| = {diff:.4f}")


check(attend_buggy)
# --8<-- [end:check]


# --8<-- [start:fix]
def attend_fixed(q, k, v, bias):
    # pass the float mask as it is (it is added), or convert it: bias == 0
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias == 0)


check(attend_fixed)
# --8<-- [end:fix]
