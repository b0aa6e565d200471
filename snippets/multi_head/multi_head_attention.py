"""Multi-head self-attention: the idea (MultiHeadAttention), then a robust
version that checks its input (CheckedMultiHeadAttention)."""

# ruff: noqa: E402

# The device, for the pages that show the module alone (the FAQ's folds).
# --8<-- [start:device]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
# --8<-- [end:device]

# --8<-- [start:module]
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention of x: (B, L, d_model)."""

    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads  # d_k = d_model / H
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim, bias)  # W^Q W^K W^V
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias)  # W^O

    def split_heads(self, t):
        """(B, L, d_model) -> (B, H, L, d_k): head i gets the i-th block."""
        B, L, _ = t.shape
        return t.view(B, L, self.num_heads, self.head_dim).transpose(1, 2)

    def merge_heads(self, t):
        """(B, H, L, d_k) -> (B, L, d_model): the heads side by side."""
        B, _, L, _ = t.shape
        return t.transpose(1, 2).reshape(B, L, self.embed_dim)

    def forward(self, x, attn_mask=None, trace=None):
        Q, K, V = self.in_proj(x).chunk(3, dim=-1)  # 3 × (B, L, d_model)
        Q_h, K_h, V_h = map(self.split_heads, (Q, K, V))  # 3 × (B, H, L, d_k)
        # (B, H, L, d_k) @ (B, H, d_k, L) -> (B, H, L, L), scaled by 1/√d_k
        scores = Q_h @ K_h.transpose(-2, -1) / self.head_dim**0.5
        if attn_mask is not None:  # bool, True = do not attend
            scores = scores.masked_fill(attn_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # (B, H, L, L): rows sum to 1
        heads = weights @ V_h  # (B, H, L, d_k): one result per head
        merged = self.merge_heads(heads)  # (B, L, d_model) = Concat(heads)
        out = self.out_proj(merged)  # (B, L, d_model): W^O mixes the heads
        if trace is not None:  # every step, for chapter 5's table
            trace.update(X=x, Q=Q, K=K, V=V, Q_h=Q_h, K_h=K_h, V_h=V_h)
            trace.update(scores=scores, weights=weights, heads=heads)
            trace.update(merged=merged, output=out)
        return out, weights

    # --8<-- [end:module]


from snippets.multi_head.checks import check_heads, check_input


# --8<-- [start:robust]
class CheckedMultiHeadAttention(MultiHeadAttention):
    """MultiHeadAttention that checks its input, as nn.MultiheadAttention
    does, and also takes one sequence (L, d_model) and a key_padding_mask."""

    def __init__(self, embed_dim, num_heads, bias=True):
        check_heads(embed_dim, num_heads)
        super().__init__(embed_dim, num_heads, bias)

    def forward(self, x, attn_mask=None, key_padding_mask=None, trace=None):
        """Masks are bool, True = do not attend: attn_mask (L, L),
        key_padding_mask (B, L), or (L,) for x of shape (L, d_model)."""
        weight = self.in_proj.weight
        check_input(x, self.embed_dim, attn_mask, key_padding_mask, weight)
        if x.ndim == 2:  # one sequence: a batch of 1, removed at the end
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask[None]
            out, weights = self(x[None], attn_mask, key_padding_mask, trace)
            return out[0], weights[0]
        if key_padding_mask is not None:
            # (B, L) -> (B, 1, 1, L): hide these keys from every query and head
            hidden = key_padding_mask[:, None, None, :]
            attn_mask = hidden if attn_mask is None else attn_mask | hidden
        return super().forward(x, attn_mask, trace)

    # --8<-- [end:robust]


if __name__ == "__main__":
    # --8<-- [start:build]
    device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.manual_seed(0)
    B, L, d_model, H = 2, 5, 12, 3  # batch, tokens, width, heads
    mha = MultiHeadAttention(d_model, H).to(device)
    print(mha)
    # --8<-- [end:build]

    # --8<-- [start:shapes]
    x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)

    trace = {}  # filled with every intermediate tensor
    out, weights = mha(x, trace=trace)
    print("x      ", tuple(x.shape))
    print("Q      ", tuple(trace["Q"].shape), "->", tuple(trace["Q_h"].shape))
    print("out    ", tuple(out.shape))
    print("weights", tuple(weights.shape))
    # --8<-- [end:shapes]

    # --8<-- [start:robust_demo]
    checked = CheckedMultiHeadAttention(d_model, H).to(device)
    checked.load_state_dict(mha.state_dict())  # the same weights as mha

    # one sequence without the batch dimension works too
    x0 = x[0]  # (L, d_model)
    out0, weights0 = checked(x0)
    print("x0      ", tuple(x0.shape))
    print("out0    ", tuple(out0.shape))
    print("weights0", tuple(weights0.shape))
    torch.testing.assert_close(out0, out[0])  # same as sequence 0 of the batch

    bad_calls = {
        "wrong rank": lambda: checked(x[0, 0]),  # (d_model,)
        "wrong d_model": lambda: checked(x[..., :10]),  # (B, L, 10)
        "empty sequence": lambda: checked(x[:, :0]),  # (B, 0, d_model)
        "integers": lambda: checked(x.long()),
        "d_model % H != 0": lambda: CheckedMultiHeadAttention(10, 3),
    }
    for name, call in bad_calls.items():
        try:
            call()
        except (ValueError, TypeError) as error:
            print(f"{name:16} {type(error).__name__}: {error}")
    # --8<-- [end:robust_demo]

    # --8<-- [start:compare]
    ref = nn.MultiheadAttention(d_model, H, batch_first=True)
    with torch.no_grad():
        # PyTorch starts its biases at 0; random ones make the test cover them
        nn.init.normal_(ref.in_proj_bias)
        nn.init.normal_(ref.out_proj.bias)
    ref = ref.to(device)

    with torch.no_grad():  # copy PyTorch's weights into our module
        mha.in_proj.weight.copy_(ref.in_proj_weight)  # W^Q, W^K, W^V
        mha.in_proj.bias.copy_(ref.in_proj_bias)
        mha.out_proj.weight.copy_(ref.out_proj.weight)  # W^O
        mha.out_proj.bias.copy_(ref.out_proj.bias)

    # True = do not attend: no looking ahead; sequence 1 ends in 2 pad tokens
    causal = torch.ones(L, L, dtype=torch.bool, device=device).triu(diagonal=1)
    padding = torch.zeros(B, L, dtype=torch.bool, device=device)  # (B, L)
    padding[1, -2:] = True

    # our module takes one mask: padding (B, L) -> (B, 1, 1, L) hides these
    # keys from every query in every head, and | adds the causal mask to it
    both = causal | padding[:, None, None, :]  # (B, 1, L, L)
    cases = {  # name: (our mask, PyTorch's masks)
        "no mask": (None, {}),
        "causal": (causal, {"attn_mask": causal}),
        "causal + padding": (
            both,
            {"attn_mask": causal, "key_padding_mask": padding},
        ),
    }
    for name, (mask, masks) in cases.items():
        ours, our_weights = mha(x, attn_mask=mask)
        theirs, their_weights = ref(
            x, x, x, **masks, average_attn_weights=False
        )
        torch.testing.assert_close(ours, theirs)
        torch.testing.assert_close(our_weights, their_weights)  # (B, H, L, L)
        print(f"{name:16} output and per-head weights match")
    # --8<-- [end:compare]

    # --8<-- [start:w_o]
    import copy

    # zero W_0^V, head 0's value matrix: the d_k rows of in_proj from 2·d_model
    mha_0 = copy.deepcopy(mha)
    d_k = mha.head_dim
    with torch.no_grad():
        mha_0.in_proj.weight[2 * d_model : 2 * d_model + d_k].zero_()

    before, after = {}, {}
    mha(x, trace=before)
    mha_0(x, trace=after)

    def changed(a, b):
        """Indices along the last dimension where a and b differ anywhere."""
        differs = (a - b).abs().amax(dim=(0, 1)) > 1e-6
        return differs.nonzero().flatten().tolist()

    print("concat columns changed:", changed(before["merged"], after["merged"]))
    print("output columns changed:", changed(before["output"], after["output"]))
    # --8<-- [end:w_o]

    # --8<-- [start:parameters]
    def count(module):
        return sum(p.numel() for p in module.parameters())

    d_model = 512
    for bias in (True, False):
        n_torch = count(nn.MultiheadAttention(d_model, 8, bias=bias).to(device))
        n_ours = count(MultiHeadAttention(d_model, 8, bias=bias).to(device))
        print(f"bias={bias}: PyTorch {n_torch:,}, ours {n_ours:,}")
    for H in (1, 8, 16):
        n_ours = count(MultiHeadAttention(d_model, H).to(device))
        print(f"H = {H:2}: ours {n_ours:,}")
    print(f"4·d_model² + 4·d_model = {4 * d_model**2 + 4 * d_model:,}")
    print(f"4·d_model²             = {4 * d_model**2:,}")
    # --8<-- [end:parameters]

    # --8<-- [start:parameter_shapes]
    # where nn.MultiheadAttention keeps them: W^Q, W^K, W^V packed in one tensor
    ref_512 = nn.MultiheadAttention(d_model, 8).to(device)
    for name, p in ref_512.named_parameters():
        print(f"{name:<16} {tuple(p.shape)}")
    # --8<-- [end:parameter_shapes]
