"""Cross-attention: queries from one sequence, keys and values from another."""

# --8<-- [start:cross]
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
L_q, L_k, d_model, d_k, d_v = 3, 7, 8, 6, 5

# decoder_x is the sequence that asks; memory (encoder output) is what is read
decoder_x = torch.randn(L_q, d_model).to(device)  # (L_q, d_model)
memory = torch.randn(L_k, d_model).to(device)  # (L_k, d_model)

w_q = nn.Linear(d_model, d_k, bias=False).to(device)
w_k = nn.Linear(d_model, d_k, bias=False).to(device)
w_v = nn.Linear(d_model, d_v, bias=False).to(device)

Q = w_q(decoder_x)  # (L_q, d_k): one query per decoder position
K = w_k(memory)  # (L_k, d_k): keys from the encoder ...
V = w_v(memory)  # (L_k, d_v): ... and values from the encoder too

scores = Q @ K.T / d_k**0.5  # (L_q, L_k)
A = torch.softmax(scores, dim=-1)  # (L_q, L_k): rows sum to 1 over the encoder
by_hand = A @ V  # (L_q, d_v)

out = F.scaled_dot_product_attention(Q, K, V)  # (L_q, d_v)
print("scores", tuple(scores.shape), "output", tuple(out.shape))
print(f"max |out - by_hand| = {(out - by_hand).abs().max().item():.6f}")
# --8<-- [end:cross]

# --8<-- [start:self]
# self-attention: keys and values from decoder_x itself instead of memory
K_self, V_self = w_k(decoder_x), w_v(decoder_x)  # (L_q, d_k), (L_q, d_v)
scores_self = Q @ K_self.T / d_k**0.5  # (L_q, L_q)
out_self = F.scaled_dot_product_attention(Q, K_self, V_self)  # (L_q, d_v)
print("scores", tuple(scores_self.shape), "output", tuple(out_self.shape))
# --8<-- [end:self]
