"""Chapter 8's exercises: chunked prefill; one new token needs no mask."""

# ruff: noqa: E402
import torch

from snippets.decoding.tiny_decoder import KVCache, TinyDecoder

# as the page's blocks before the exercises left them (sections 8.1 to 8.3)
device = "cuda" if torch.cuda.is_available() else "cpu"
vocab = "<pad> the a cat dog bird sat ran saw on under mat tree".split()
vocab += ["and", "quietly", "."]
torch.manual_seed(2)
model = TinyDecoder(len(vocab)).to(device).eval()
generated = "the cat sat cat cat on ran and .".split()  # 8.1 and 8.3 printed it
tokens = torch.tensor([[vocab.index(w) for w in generated]], device=device)


# --8<-- [start:chunked_prefill]
with torch.no_grad():
    full = model(tokens)  # (1, 9, 16): one pass over all 9 tokens
    chunked = KVCache()
    start = 0
    for size in [4, 3, 2]:  # L_q new tokens per call, on top of the cache
        chunk = tokens[:, start : start + size]  # (1, size)
        logits = model(chunk, cache=chunked)  # L_k = start + size keys
        same = torch.allclose(logits, full[:, start : start + size], atol=1e-5)
        print(
            f"tokens {start}..{start + size - 1}: L_q={size}, "
            f"L_k={len(chunked)}, same as one pass: {same}"
        )
        start += size
# --8<-- [end:chunked_prefill]


# --8<-- [start:one_new_token]
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L_k, d_k = 6, 8  # 5 cached tokens + 1 new one
q_all, k, v = (torch.randn(1, 1, L_k, d_k).to(device) for _ in range(3))
q = q_all[:, :, -1:]  # (1, 1, 1, d_k): only the new token asks

# the right answer: the last row of causal attention over all 6 tokens
reference = F.scaled_dot_product_attention(q_all, k, v, is_causal=True)
reference = reference[:, :, -1:]  # (1, 1, 1, d_k)

no_mask = F.scaled_dot_product_attention(q, k, v)  # (1, 1, 1, d_k)
print("no mask matches:", torch.allclose(no_mask, reference, atol=1e-5))
trap = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print("is_causal=True matches:", torch.allclose(trap, reference, atol=1e-5))

eye = torch.eye(L_k, device=device).expand(1, 1, L_k, L_k)  # values = I
weights = F.scaled_dot_product_attention(q, k, eye, is_causal=True)
seen = (weights[0, 0, 0] > 0).nonzero().flatten()
print("is_causal=True lets it see keys:", seen.tolist())
# --8<-- [end:one_new_token]
