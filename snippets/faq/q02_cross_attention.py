"""Q2: cross-attention: query from the decoder; key, value from the encoder."""

# --8<-- [start:cross]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
attention = nn.MultiheadAttention(embed_dim=16, num_heads=4, batch_first=True)
attention = attention.to(device)
encoder_out = torch.randn(2, 7, 16).to(device)  # source sentence: 7 tokens
decoder_x = torch.randn(2, 3, 16).to(device)  # target so far: 3 tokens

# cross-attention: query from the decoder, key AND value from the encoder
out, weights = attention(decoder_x, encoder_out, encoder_out)
print("cross output :", tuple(out.shape))  # one row per decoder token
print("cross weights:", tuple(weights.shape))  # (B, decoder len, encoder len)

# self-attention: query, key and value are the same sequence
out, weights = attention(decoder_x, decoder_x, decoder_x)
print("self weights :", tuple(weights.shape))
# --8<-- [end:cross]
