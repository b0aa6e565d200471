"""One attention layer learns to reverse a sequence; without positions, not."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:task]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

vocab_size, L = 16, 8  # token ids 0..15; sequences of 8 different tokens


def make_batch(B, g, device=device):
    """B sequences of L different tokens, drawn on the CPU with generator g."""
    rows = [torch.randperm(vocab_size, generator=g)[:L] for _ in range(B)]
    return torch.stack(rows).to(device)


def reverse(x):
    """The target: every sequence backwards."""
    return x.flip(-1)


# --8<-- [end:task]


# --8<-- [start:model]
import torch
from torch import nn


class Reverser(nn.Module):
    """Token embedding (+ learned positions), one attention layer, a readout."""

    def __init__(self, d_model=32, positions=True):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(L, d_model) if positions else None  # ch. 6.3
        self.mha = nn.MultiheadAttention(  # one head, no biases
            d_model, num_heads=1, bias=False, batch_first=True
        )
        self.out = nn.Linear(d_model, vocab_size)  # a score for every token

    def forward(self, tokens):
        """tokens (B, L) -> logits (B, L, vocab_size), weights (B, L, L)."""
        x = self.tok(tokens)
        if self.pos is not None:
            x = x + self.pos(torch.arange(tokens.shape[-1], device=x.device))
        out, weights = self.mha(x, x, x)  # one head: its attention weights
        return self.out(out), weights


@torch.no_grad()
def evaluate(model, x, target=reverse):
    """The share of tokens predicted right, and the attention weights."""
    logits, weights = model(x)
    accuracy = (logits.argmax(dim=-1) == target(x)).float().mean()
    return accuracy.item(), weights


# --8<-- [end:model]


# --8<-- [start:train]
import torch
import torch.nn.functional as F


def train(model, x_test, target=reverse, steps=300, seed=0):
    """SGD on fresh batches; returns the losses and a log of the tests."""
    g = torch.Generator().manual_seed(seed)  # the same batches on any device
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses, log = [], []

    def test(step):  # accuracy, and the attention of the first test sequence
        accuracy, weights = evaluate(model, x_test, target)
        log.append((step, accuracy, weights[0].cpu()))

    for step in range(steps):
        if step % 10 == 0:
            test(step)
        x = make_batch(64, g, device=x_test.device)  # (64, L)
        logits, _ = model(x)  # (64, L, vocab_size)
        loss = F.cross_entropy(logits.flatten(0, 1), target(x).flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    test(steps)
    return losses, log


# --8<-- [end:train]


if __name__ == "__main__":
    # --8<-- [start:example]
    letters = "ABCDEFGHIJKLMNOP"  # token id i is written letters[i]

    def text(row):
        return "".join(letters[i] for i in row.tolist())

    # held out: the model never trains on these
    x_test = make_batch(1000, torch.Generator().manual_seed(1))  # (1000, L)
    print(tuple(x_test.shape))
    for row in x_test[:3]:
        print(text(row), "->", text(reverse(row)))
    # --8<-- [end:example]

    # --8<-- [start:untrained]
    torch.manual_seed(1)
    model = Reverser().to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params:,} parameters")

    accuracy, weights = evaluate(model, x_test)  # weights: (1000, L, L)
    untrained = weights[0].cpu()  # (L, L): the first test sequence
    print(tuple(weights.shape))
    print(f"test accuracy before training: {accuracy:.3f}")
    print("argmax of each row:", weights[0].argmax(dim=-1).tolist())
    # --8<-- [end:untrained]

    # --8<-- [start:fit]
    losses, log = train(model, x_test)
    accuracy, weights = evaluate(model, x_test)
    print(f"{len(losses)} steps, {64 * len(losses):,} training sequences")
    print(f"loss at the first step: {losses[0]:.3f}")
    print(f"loss at the last step: {losses[-1]:.4f}")
    print(f"test accuracy: {accuracy:.3f}")
    # --8<-- [end:fit]

    # --8<-- [start:pattern]
    right = torch.arange(L - 1, -1, -1, device=device)  # query i -> key L-1-i
    rows = torch.arange(L, device=device)
    logits, _ = model(x_test[:1])
    print(text(x_test[0]), "->", text(logits[0].argmax(dim=-1)))
    print("argmax of each row:", weights[0].argmax(dim=-1).tolist())
    on_diagonal = (weights.argmax(dim=-1) == right).all(dim=-1)  # (1000,)
    print(f"anti-diagonal argmax: {on_diagonal.sum()} of 1000 sequences")
    on_right = weights[:, rows, right]  # (1000, L): weight on the right key
    print(f"mean weight on the right key: {on_right.mean():.2f}")
    # --8<-- [end:pattern]

    # --8<-- [start:blind]
    torch.manual_seed(1)
    blind = Reverser(positions=False).to(device)  # no position table
    blind_losses, blind_log = train(blind, x_test)
    accuracy, blind_weights = evaluate(blind, x_test)
    print(f"test accuracy without positions: {accuracy:.3f}")
    x_fresh = make_batch(50_000, torch.Generator().manual_seed(2))  # (50000, L)
    print(f"on 50,000 fresh sequences: {evaluate(blind, x_fresh)[0]:.3f}")
    on_right = blind_weights[:, rows, right]  # (1000, L)
    print(f"mean weight on the right key: {on_right.mean():.2f}")
    # --8<-- [end:blind]

    # --8<-- [start:roll]
    x = x_test[:1]  # (1, L)
    rolled = x.roll(1, dims=-1)  # (1, L): every token one place to the right
    with torch.no_grad():
        logits, _ = blind(x)
        logits_rolled, _ = blind(rolled)
    same = torch.allclose(logits_rolled.roll(-1, dims=1), logits, atol=1e-5)
    answers_rolled = reverse(rolled).roll(-1, dims=-1)  # back in x's order
    print("tokens:                      ", text(x[0]))
    print("right answers:               ", text(reverse(x)[0]))
    print("right answers after the roll:", text(answers_rolled[0]))
    print("the model's logits for each token unchanged:", same)
    # --8<-- [end:roll]

    # --8<-- [start:positions_alone]
    # in_proj_weight stacks W^Q, W^K, W^V, each in the (out, in) layout
    w_q, w_k, w_v = model.mha.in_proj_weight.chunk(3)  # (out, in) each
    P = model.pos.weight  # (L, d_model): the learned position table
    d_k = model.mha.head_dim
    with torch.no_grad():  # P @ w_q.T is P W^Q, P @ w_k.T is P W^K
        scores = (P @ w_q.T) @ (P @ w_k.T).T / d_k**0.5  # (L, L): no tokens
        positions_only = scores.softmax(dim=-1)  # (L, L)
    print("argmax of each row:", positions_only.argmax(dim=-1).tolist())
    smallest = positions_only[rows, right].min()  # over the L rows
    print(f"smallest weight on the right key: {smallest:.3f}")
    # --8<-- [end:positions_alone]
