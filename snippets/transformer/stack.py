"""A tiny encoder-decoder Transformer from PyTorch's layers: the shape after
each stage (figures/transformer.py draws the model from these values)."""

# --8<-- [start:stack]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

torch.manual_seed(0)
vocab, d_model, H, N = 11, 16, 4, 2  # N blocks in each stack
B, L_src, L_tgt = 2, 6, 3
src = torch.randint(vocab, (B, L_src)).to(device)  # (B, L_src): token ids
tgt = torch.randint(vocab, (B, L_tgt)).to(device)  # (B, L_tgt)

embed = nn.Embedding(vocab, d_model).to(device)
position = nn.Embedding(32, d_model).to(device)  # learned positions
kw = dict(dim_feedforward=4 * d_model, dropout=0.0, batch_first=True)
encoder = [nn.TransformerEncoderLayer(d_model, H, **kw) for _ in range(N)]
decoder = [nn.TransformerDecoderLayer(d_model, H, **kw) for _ in range(N)]
encoder = nn.ModuleList(encoder).to(device)
decoder = nn.ModuleList(decoder).to(device)
to_logits = nn.Linear(d_model, vocab).to(device)
shapes = {}  # stage -> shape

shapes["source tokens"] = src.shape
pos = torch.arange(L_src, device=device)
x = embed(src) + position(pos)  # (B, L_src, d_model)
shapes["encoder input"] = x.shape
for layer in encoder:  # self-attention, add & norm, MLP, add & norm
    x = layer(x)
memory = x  # (B, L_src, d_model): what cross-attention reads
shapes["encoder output"] = memory.shape

shapes["target tokens"] = tgt.shape
pos = torch.arange(L_tgt, device=device)
y = embed(tgt) + position(pos)  # (B, L_tgt, d_model)
shapes["decoder input"] = y.shape
causal = torch.ones(L_tgt, L_tgt, dtype=torch.bool).triu(1).to(device)
for layer in decoder:  # masked self-attention, cross-attention, MLP
    y = layer(y, memory, tgt_mask=causal)  # True = hidden
shapes["decoder output"] = y.shape
logits = to_logits(y)  # (B, L_tgt, vocab): a score per next token
shapes["logits"] = logits.shape
for stage, shape in shapes.items():
    print(f"{stage:15} {tuple(shape)}")
# --8<-- [end:stack]
