"""A tiny decoder-only model with a KV cache, and decoding with it."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:module]
import torch
import torch.nn.functional as F
from torch import nn


def decoder_mask(L_q, L_k, pad=None, device=None):
    """Bool mask, True = may attend: L_q new queries, L_k keys (cached + new).

    Causal, aligned bottom right: query i is token L_k - L_q + i. With pad
    (B, L_k), True at padding, padded keys are hidden too, but every query
    still sees itself, so that no row is empty. Shape (L_q, L_k), or
    (B, 1, L_q, L_k) with pad.
    """
    check_mask_sizes(L_q, L_k, pad)
    device = pad.device if pad is not None else device
    i = torch.arange(L_k - L_q, L_k, device=device)[:, None]  # query positions
    j = torch.arange(L_k, device=device)  # key positions
    allowed = j <= i
    if pad is None:
        return allowed
    allowed = (allowed & ~pad[:, None, :]) | (j == i)  # (B, L_q, L_k)
    return allowed[:, None]  # one mask for every head


def check_mask_sizes(L_q, L_k, pad=None):
    """Raise unless 1 <= L_q <= L_k and pad is bool (B, L_k)."""
    if not 1 <= L_q <= L_k:
        raise ValueError(
            f"need 1 <= L_q <= L_k, got L_q = {L_q} queries, L_k = {L_k} "
            "keys: with L_q > L_k the first queries would see no key"
        )
    if pad is None:
        return
    if pad.dtype != torch.bool:
        raise TypeError(f"pad must be bool (True at padding), got {pad.dtype}")
    if pad.ndim != 2 or pad.shape[1] != L_k:
        raise ValueError(
            f"pad must be (B, L_k = {L_k}), got {tuple(pad.shape)}"
        )


# --8<-- [start:kv_cache]
class KVCache:  # NEW: the whole class
    """Per layer, K and V of every token so far: (B, G, L_k, d_k)."""

    def __init__(self):
        self.k, self.v = [], []  # one tensor per layer

    def __len__(self):  # L_k, the number of cached tokens
        return self.k[0].shape[-2] if self.k else 0

    def update(self, layer, k, v):
        """Append this step's k, v to the layer's cache; return all of it."""
        if layer == len(self.k):  # the layer's first call
            self.k.append(k)
            self.v.append(v)
        else:
            self.k[layer] = torch.cat([self.k[layer], k], dim=-2)
            self.v[layer] = torch.cat([self.v[layer], v], dim=-2)
        return self.k[layer], self.v[layer]


# --8<-- [end:kv_cache]


class CausalSelfAttention(nn.Module):
    """H query heads; G <= H key/value heads (GQA, chapter 9), G = H here."""

    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.H, self.G = n_heads, n_kv_heads
        self.d_k = d_model // n_heads
        self.q = nn.Linear(d_model, n_heads * self.d_k, bias=False)
        self.k = nn.Linear(d_model, n_kv_heads * self.d_k, bias=False)
        self.v = nn.Linear(d_model, n_kv_heads * self.d_k, bias=False)
        self.o = nn.Linear(n_heads * self.d_k, d_model, bias=False)

    # --8<-- [start:attention_forward]
    # CausalSelfAttention.forward
    def forward(self, x, allowed, cache=None, layer=0):  # NEW: cache, layer
        B, L_q, _ = x.shape  # L_q new tokens

        def heads(t, count):  # (B, L_q, count * d_k) -> (B, count, L_q, d_k)
            return t.view(B, L_q, count, self.d_k).transpose(1, 2)

        q = heads(self.q(x), self.H)  # (B, H, L_q, d_k)
        k, v = heads(self.k(x), self.G), heads(self.v(x), self.G)
        if cache is not None:  # NEW: append k, v; get every token's
            k, v = cache.update(layer, k, v)  # 2 × (B, G, L_k, d_k)
        k = k.repeat_interleave(self.H // self.G, dim=1)  # (B, H, L_k, d_k)
        v = v.repeat_interleave(self.H // self.G, dim=1)  # GQA: chapter 9
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        return self.o(out.transpose(1, 2).reshape(B, L_q, -1))

    # --8<-- [end:attention_forward]


class Block(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, n_kv_heads)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model),
            nn.GELU(),
            nn.Linear(4 * d_model, d_model),
        )

    def forward(self, x, allowed, cache=None, layer=0):  # NEW: cache, layer
        x = x + self.attn(self.ln1(x), allowed, cache, layer)
        return x + self.mlp(self.ln2(x))


class TinyDecoder(nn.Module):
    """Token + learned position embeddings, pre-norm causal blocks."""

    def __init__(
        self,
        vocab_size,
        d_model=32,
        n_heads=4,
        n_layers=2,
        max_len=64,
        n_kv_heads=None,
    ):
        super().__init__()
        n_kv_heads = n_kv_heads or n_heads
        if d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError(
                f"need d_model % n_heads == 0 and n_heads % n_kv_heads == 0, "
                f"got {d_model = }, {n_heads = }, {n_kv_heads = }"
            )
        self.max_len = max_len
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(
            Block(d_model, n_heads, n_kv_heads) for _ in range(n_layers)
        )
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    # --8<-- [start:decoder_forward]
    # TinyDecoder.forward (NEW: the argument cache)
    def forward(self, tokens, positions=None, pad=None, cache=None):
        """tokens (B, L_q) -> logits (B, L_q, vocab): L_q new tokens.

        positions (B, L_q): position ids; by default the L_q slots after the
        cached tokens. pad (B, L_k): True at padding, L_k = cached + L_q.
        cache: a KVCache, extended in place.
        """
        check_decoder_input(self, tokens, positions, pad, cache)
        B, L_q = tokens.shape
        past = len(cache) if cache is not None else 0  # NEW: cached tokens
        if positions is None:  # NEW: the new tokens come after them
            positions = torch.arange(past, past + L_q, device=tokens.device)
            positions = positions.expand(B, L_q)  # (B, L_q)
        x = self.tok(tokens) + self.pos(positions)  # (B, L_q, d_model)
        # NEW: L_q queries, past + L_q keys, aligned bottom right (8.4)
        allowed = decoder_mask(L_q, past + L_q, pad, device=tokens.device)
        for layer, block in enumerate(self.blocks):
            x = block(x, allowed, cache, layer)  # NEW: the cache goes along
        return self.head(self.ln(x))

    # --8<-- [end:decoder_forward]


def check_decoder_input(model, tokens, positions, pad, cache):
    """Raise ValueError/TypeError naming the shapes that do not fit."""
    if tokens.ndim != 2 or tokens.shape[1] == 0:
        raise ValueError(
            f"tokens must be (B, L), L >= 1, got {tuple(tokens.shape)}"
        )
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must be integer ids, got {tokens.dtype}")
    check_ids("token", tokens, model.tok.num_embeddings)
    B, L = tokens.shape
    past = len(cache) if cache is not None else 0
    if cache is not None and cache.k and cache.k[0].shape[0] != B:
        raise ValueError(
            f"tokens {tuple(tokens.shape)} but the cache holds "
            f"{cache.k[0].shape[0]} sequences"
        )
    if positions is not None and positions.shape != tokens.shape:
        raise ValueError(
            f"positions {tuple(positions.shape)} must match "
            f"tokens {tuple(tokens.shape)}"
        )
    last = past + L - 1 if positions is None else int(positions.max())
    if last >= model.max_len:
        raise ValueError(
            f"position {last} is past the position table: "
            f"max_len = {model.max_len} rows, positions 0..{model.max_len - 1}"
        )
    if positions is not None:
        check_ids("position", positions, model.max_len)
    if pad is not None and tuple(pad.shape) != (B, past + L):
        raise ValueError(
            f"pad {tuple(pad.shape)} must be (B, L_k) = "
            f"({B}, {past + L}): {past} cached + {L} new tokens"
        )


def check_ids(name, ids, n):
    """Raise unless ids are integers in 0 .. n-1; name the first bad one."""
    if ids.is_floating_point() or ids.dtype == torch.bool:
        raise TypeError(f"{name} ids must be integers, got {ids.dtype}")
    bad = ids[(ids < 0) | (ids >= n)]
    if bad.numel():
        raise ValueError(
            f"{name} id {bad[0].item()} is out of range: "
            f"{n} rows, ids 0..{n - 1}"
        )


# --8<-- [end:module]


if __name__ == "__main__":
    # --8<-- [start:build]
    device = "cuda" if torch.cuda.is_available() else "cpu"

    vocab = "<pad> the a cat dog bird sat ran saw on under mat tree".split()
    vocab += ["and", "quietly", "."]  # 16 tokens; id 0 is padding
    torch.manual_seed(2)
    model = TinyDecoder(len(vocab)).to(device).eval()  # random weights

    def ids(words):
        return torch.tensor([[vocab.index(w) for w in words]], device=device)

    def words(row):
        return " ".join(vocab[i] for i in row.tolist())

    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params:,} parameters, vocabulary of {len(vocab)}")
    # --8<-- [end:build]

    # --8<-- [start:greedy]
    @torch.no_grad()
    def generate(model, prompt, steps):
        """Greedy decoding, no cache: the whole sequence again every step."""
        tokens, step_logits = prompt, []
        for _ in range(steps):
            logits = model(tokens)[:, -1]  # the last position predicts
            step_logits.append(logits)
            next_token = logits.argmax(dim=-1, keepdim=True)  # (1, 1): greedy
            tokens = torch.cat([tokens, next_token], dim=1)
        return tokens, torch.stack(step_logits, dim=1)

    prompt = ids(["the", "cat", "sat"])  # (1, 3)
    tokens, step_logits = generate(model, prompt, steps=6)
    print(words(tokens[0]))
    # --8<-- [end:greedy]

    # --8<-- [start:teacher_forcing]
    P = prompt.shape[1]
    with torch.no_grad():
        all_logits = model(tokens)  # (1, 9, 16): one pass over all 9 tokens
    # position t predicts token t + 1: rows P-1 .. 7 are the 6 steps
    print(
        "6 steps == one pass:",
        torch.allclose(all_logits[:, P - 1 : -1], step_logits, atol=1e-5),
    )

    # training: feed the true sentence, predict every next token at once
    target = ids(["the", "cat", "sat", "on", "the", "mat", "."])
    logits = model(target[:, :-1])  # (1, 6, 16): 6 predictions
    loss = F.cross_entropy(logits.flatten(0, 1), target[:, 1:].flatten())
    print(
        tuple(logits.shape), f"predictions in one pass, loss {loss.item():.2f}"
    )

    # the causal mask: a later token cannot change earlier predictions
    changed = tokens.clone()
    changed[0, -1] = vocab.index("tree")
    with torch.no_grad():
        other = model(changed)
    print(
        "earlier positions unchanged:",
        torch.allclose(other[:, :-1], all_logits[:, :-1], atol=1e-6),
    )
    # --8<-- [end:teacher_forcing]

    # --8<-- [start:cache]
    cache = KVCache()
    with torch.no_grad():
        logits = model(prompt, cache=cache)[:, -1]  # (1, 16): prefill 3 tokens
        tokens = prompt
        for step in range(6):
            next_token = logits.argmax(dim=-1, keepdim=True)
            tokens = torch.cat([tokens, next_token], dim=1)
            logits = model(next_token, cache=cache)[:, -1]  # 1 new token
            full = model(tokens)[:, -1]  # recompute everything
            same = torch.allclose(logits, full, atol=1e-5)
            print(
                f"step {step}: cached K {tuple(cache.k[0].shape)}  "
                f"same as full: {same}"
            )
    # --8<-- [end:cache]

    # --8<-- [start:memory]
    n_layers, (B, H, L_k, d_k) = len(model.blocks), cache.k[0].shape
    size = cache.k[0].element_size()  # bytes per number: 4 in float32
    token_bytes = 2 * n_layers * H * d_k * size  # K and V, in every layer
    print(
        f"2 x {n_layers} layers x H={H} x d_k={d_k} x {size} bytes "
        f"= {token_bytes:,} bytes per token"
    )
    held = sum(t.numel() * t.element_size() for t in cache.k + cache.v)
    print(
        f"{L_k} tokens: {L_k * token_bytes:,} bytes; the cache holds {held:,}"
    )

    # a larger model: 32 layers, 32 heads of d_k = 128, float16 (2 bytes)
    big = 2 * 32 * 32 * 128 * 2
    print(
        f"32 layers x H=32 x d_k=128 in float16: {big // 2**10:,} KiB per "
        f"token, {4096 * big / 2**30:.0f} GiB for 4,096 tokens"
    )
    # --8<-- [end:memory]

    # --8<-- [start:timing]
    import time

    lengths, repeats = [32, 64, 128, 256, 512], 7

    def seconds(fn, *args):
        """Shortest of `repeats` timed runs of fn(*args), after one warm-up."""
        fn(*args)
        best = float("inf")
        for _ in range(repeats):
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            fn(*args)
            if device == "cuda":
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - start)
        return best

    def cached_step(seq, past):
        """The last token of seq, on a new cache holding past: every run
        appends to the same L_k - 1 cached tokens."""
        cache = KVCache()
        cache.k, cache.v = list(past.k), list(past.v)
        return bench(seq[:, -1:], cache=cache)

    torch.manual_seed(0)
    bench = TinyDecoder(len(vocab), d_model=64, max_len=512).to(device).eval()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one CPU thread: steadier timings
    per_token = {"full": [], "cached": []}  # seconds per generated token
    with torch.no_grad():
        for L_k in lengths:  # time the step that sees L_k tokens
            seq = torch.randint(1, len(vocab), (1, L_k)).to(device)  # (1, L_k)
            past = KVCache()
            bench(seq[:, :-1], cache=past)  # the L_k - 1 tokens before
            per_token["full"].append(seconds(bench, seq))
            per_token["cached"].append(seconds(cached_step, seq, past))
    torch.set_num_threads(threads)
    times = zip(lengths, per_token["full"], per_token["cached"], strict=True)
    for L_k, f, c in times:  # seconds without and with the cache
        print(
            f"L_k={L_k}: no cache {f * 1e3:.2f} ms, "
            f"KV cache {c * 1e3:.2f} ms, ratio {f / c:.1f}"
        )
    # --8<-- [end:timing]

    # --8<-- [start:left_padding]
    prompts = [["the", "cat", "sat", "on"], ["a", "dog"]]
    P = max(len(p) for p in prompts)
    batch = torch.tensor(
        [[0] * (P - len(p)) + [vocab.index(w) for w in p] for p in prompts],
        device=device,
    )  # (2, P): <pad> (id 0) on the left: every prompt ends in the last column
    pad = batch == 0  # (2, P)
    positions = ((~pad).cumsum(dim=-1) - 1).clamp(min=0)  # skip the padding
    print(batch.cpu())
    print(positions.cpu())
    print(decoder_mask(P, P, pad)[1, 0].long().cpu())  # "a dog": may attend
    # --8<-- [end:left_padding]

    # --8<-- [start:padding_bug]
    with torch.no_grad():
        alone = model(ids(prompts[1]))  # (1, 2, 16): "a dog" alone, no padding
        checks = {
            "positions counted from 0 at the padding": model(batch, pad=pad),
            "padding not masked": model(batch, positions=positions),
            "position ids skip padding + mask": model(
                batch, positions=positions, pad=pad
            ),
        }
    for name, logits in checks.items():
        same = torch.allclose(logits[1:, -2:], alone, atol=1e-5)
        print(f"{name:<40} same as alone: {same}")
    # --8<-- [end:padding_bug]

    # --8<-- [start:batched]
    @torch.no_grad()
    def generate_batch(model, batch, pad, steps):
        """Greedy decoding of left-padded prompts, with a KV cache."""
        positions = ((~pad).cumsum(dim=-1) - 1).clamp(min=0)
        cache = KVCache()
        logits = model(batch, positions=positions, pad=pad, cache=cache)
        out = batch
        for _ in range(steps):
            next_token = logits[:, -1].argmax(dim=-1, keepdim=True)  # (2, 1)
            out = torch.cat([out, next_token], dim=1)
            no_pad = torch.zeros_like(next_token, dtype=torch.bool)
            pad = torch.cat([pad, no_pad], dim=1)  # new tokens are real
            positions = positions[:, -1:] + 1  # each row counts on
            logits = model(next_token, positions, pad, cache)
        return out

    together = generate_batch(model, batch, pad, steps=5)  # (2, P + 5)
    for row, p in zip(together, prompts, strict=True):
        one_by_one, _ = generate(model, ids(p), steps=5)
        real = row[P - len(p) :]  # drop the padding
        print(
            f"{words(real):<40} same as alone: "
            f"{torch.equal(real, one_by_one[0])}"
        )
    # --8<-- [end:batched]

    # --8<-- [start:bad_input]
    for call in [
        lambda: model(ids(["the"] * 65)),  # longer than max_len = 64
        lambda: model(batch, positions=positions[:, 1:], pad=pad),
        lambda: model(batch[:, -1:], pad=pad, cache=KVCache()),
        lambda: model(batch.float()),
    ]:
        try:
            call()
        except (ValueError, TypeError) as error:
            print(f"{type(error).__name__}: {error}")
    # --8<-- [end:bad_input]

    # Figure 8-1: layer 0's cached K and V as "cat dog" grows to "cat dog sat"
    with torch.no_grad():
        grown = KVCache()
        model(ids(["cat", "dog"]), cache=grown)  # prefill: 2 tokens
        prompt_k, prompt_v = grown.k[0].clone(), grown.v[0].clone()
        model(ids(["sat"]), cache=grown)  # append 1 token
    grown_k, grown_v = grown.k[0], grown.v[0]  # (1, 4, 3, 8)
