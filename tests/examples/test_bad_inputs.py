"""Bad input to the reusable functions of snippets/: the error type and a message naming the
problem.

One table of calls, each with the exception it must raise and a regex the message must match;
then the RoPE precision in float16 and bfloat16; then valid calls (every shape the pages use)
that the checks must let through.
"""

import warnings

import pytest
import torch
from torch import nn

from snippets.decoding.tiny_decoder import KVCache, TinyDecoder, decoder_mask
from snippets.multi_head.checks import check_input
from snippets.multi_head.multi_head_attention import CheckedMultiHeadAttention
from snippets.positional_encoding.learned import checked_add_positions as add_positions
from snippets.positional_encoding.rope import checked_rope as rope
from snippets.scaled_dot_product.attention import checked_attention as attention

f16, bf16, f64, long = torch.float16, torch.bfloat16, torch.float64, torch.long


def ones(*shape, dtype=torch.float32):
    return torch.ones(*shape, dtype=dtype)


def keep_tril(L, dtype=torch.float32):
    """The sdpa keep mask (1 = may attend) as floats: the mistake the check catches."""
    return torch.ones(L, L, dtype=dtype).tril()


def mha(dtype=torch.float32):
    torch.manual_seed(0)
    return CheckedMultiHeadAttention(12, 3).to(dtype=dtype)


def decoder():
    torch.manual_seed(0)
    return TinyDecoder(16, max_len=64)  # ids 0..15, positions 0..63


table = nn.Embedding(512, 64)
x5 = ones(2, 5, 12)
q5 = ones(2, 3, 5, 8)
causal_hide = torch.ones(5, 5, dtype=torch.bool).triu(1)  # True = hidden (MHA)
causal_keep = torch.ones(5, 5, dtype=torch.bool).tril()  # True = attend (sdpa)
tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])

CASES = [
    # --- checked_rope: snippets/positional_encoding/rope.py
    # -------------------------------------
    (
        "rope-B-equals-H-positions-B-L",
        lambda: rope(ones(2, 2, 4, 8), torch.zeros(2, 4, dtype=long)),
        ValueError,
        r"one dimension per leading dimension of x.*x \(2, 2, 4, 8\), positions \(2, 4\)",
    ),
    (
        "rope-B-equals-H-3",
        lambda: rope(ones(3, 3, 5, 8), torch.zeros(3, 5, dtype=long)),
        ValueError,
        r"e\.g\. \(B, 1, L\) for \(B, H, L, d_k\): x \(3, 3, 5, 8\), positions \(3, 5\)",
    ),
    (
        "rope-B1-positions-1-L-for-4d-x",
        lambda: rope(ones(1, 2, 4, 8), torch.zeros(1, 4, dtype=long)),
        ValueError,
        r"x \(1, 2, 4, 8\), positions \(1, 4\)",
    ),
    (
        "rope-B-H-mismatch",
        lambda: rope(ones(2, 3, 4, 8), torch.zeros(2, 4, dtype=long)),
        ValueError,
        r"must broadcast to \(\.\.\., L\): x \(2, 3, 4, 8\), positions \(2, 4\)",
    ),
    (
        "rope-odd-d",
        lambda: rope(ones(4, 7), torch.arange(4)),
        ValueError,
        r"d_k = 7 must be even to form pairs: x \(4, 7\), positions \(4,\)",
    ),
    (
        "rope-too-many-positions",
        lambda: rope(ones(4, 8), torch.arange(5)),
        ValueError,
        r"must broadcast to \(\.\.\., L\): x \(4, 8\), positions \(5,\)",
    ),
    (
        "rope-wrong-batch",
        lambda: rope(ones(2, 4, 8), torch.zeros(3, 4, dtype=long)),
        ValueError,
        r"x \(2, 4, 8\), positions \(3, 4\)",
    ),
    (
        "rope-scalar-positions",
        lambda: rope(ones(4, 8), torch.tensor(3)),
        ValueError,
        r"positions \(\)",
    ),
    (
        "rope-float-positions",
        lambda: rope(ones(4, 8), torch.arange(4.0)),
        TypeError,
        r"positions must be integers, got torch\.float32",
    ),
    (
        "rope-bool-positions",
        lambda: rope(ones(4, 8), torch.ones(4, dtype=torch.bool)),
        TypeError,
        r"positions must be integers, got torch\.bool",
    ),
    (
        "rope-complex-positions",
        lambda: rope(ones(4, 8), torch.zeros(4, dtype=torch.complex64)),
        TypeError,
        r"positions must be integers, got torch\.complex64",
    ),
    (
        "rope-int-x",
        lambda: rope(ones(4, 8, dtype=long), torch.arange(4)),
        TypeError,
        r"x must be a float \(\.\.\., L, d_k\) tensor: x \(4, 8\)",
    ),
    (
        "rope-1d-x",
        lambda: rope(ones(8), torch.arange(1)),
        TypeError,
        r"float \(\.\.\., L, d_k\) tensor: x \(8,\)",
    ),
    (
        "rope-list-x",
        lambda: rope([[1.0, 2.0]], torch.arange(1)),
        TypeError,
        r"x and positions must be tensors",
    ),
    (
        "rope-list-positions",
        lambda: rope(ones(4, 8), [0, 1, 2, 3]),
        TypeError,
        r"x and positions must be tensors",
    ),
    # --- scaled_dot_product_attention: snippets/scaled_dot_product/attention.py
    # ---------------------------
    (
        "sdpa-float-keep-mask",
        lambda: attention(q5, q5, q5, mask=keep_tril(5)),
        ValueError,
        r"mask \(5, 5\) is float with only 0s and 1s: float masks are added to the scores.*bool",
    ),
    (
        "sdpa-float16-keep-mask",
        lambda: attention(q5.half(), q5.half(), q5.half(), mask=keep_tril(5, f16)),
        ValueError,
        r"mask \(5, 5\) is float with only 0s and 1s",
    ),
    (
        "sdpa-float64-keep-mask",
        lambda: attention(q5.double(), q5.double(), q5.double(), mask=keep_tril(5, f64)),
        ValueError,
        r"float masks are added to the scores",
    ),
    (
        "sdpa-float-padding-keep-mask",
        lambda: attention(q5, q5, q5, mask=ones(2, 1, 1, 5)),
        ValueError,
        r"mask \(2, 1, 1, 5\) is float with only 0s and 1s.*True = may attend",
    ),
    (
        "sdpa-d-k-differs",
        lambda: attention(q5, q5[..., :6], q5),
        ValueError,
        r"q \(2, 3, 5, 8\) and k \(2, 3, 5, 6\) need the same feature size d_k",
    ),
    (
        "sdpa-L-k-differs",
        lambda: attention(q5, q5, q5[..., :4, :]),
        ValueError,
        r"k \(2, 3, 5, 8\) and v \(2, 3, 4, 8\) need the same length L_k",
    ),
    (
        "sdpa-mask-shape",
        lambda: attention(q5, q5, q5, mask=causal_keep[..., :4]),
        ValueError,
        r"mask \(5, 4\) does not broadcast to the scores \(2, 3, 5, 5\)",
    ),
    (
        "sdpa-int-q",
        lambda: attention(q5.long(), q5, q5),
        TypeError,
        r"q \(2, 3, 5, 8\) must be float, got torch\.int64",
    ),
    (
        "sdpa-dtypes-differ",
        lambda: attention(q5, q5.double(), q5),
        TypeError,
        r"dtypes differ: torch\.float32, torch\.float64, torch\.float32",
    ),
    (
        "sdpa-1d-q",
        lambda: attention(ones(8), q5, q5),
        ValueError,
        r"q must be \(\.\.\., L, d\), got shape \(8,\)",
    ),
    (
        "sdpa-empty-k",
        lambda: attention(q5, q5[..., :0, :], q5[..., :0, :]),
        ValueError,
        r"k \(2, 3, 0, 8\) has an empty dimension",
    ),
    (
        "sdpa-batches-differ",
        lambda: attention(ones(2, 5, 8), ones(3, 5, 8), ones(3, 5, 8)),
        ValueError,
        r"batches of q \(2, 5, 8\), k \(3, 5, 8\), v \(3, 5, 8\) differ",
    ),
    (
        "sdpa-int-mask",
        lambda: attention(q5, q5, q5, mask=causal_keep.long()),
        TypeError,
        r"mask must be bool or torch\.float32, got torch\.int64",
    ),
    (
        "sdpa-float64-mask-float32-q",
        lambda: attention(q5, q5, q5, mask=torch.zeros(5, 5, dtype=f64)),
        TypeError,
        r"mask must be bool or torch\.float32, got torch\.float64",
    ),
    ("sdpa-list-q", lambda: attention([[1.0]], q5, q5), TypeError, r"q must be a tensor, got list"),
    (
        "sdpa-list-mask",
        lambda: attention(q5, q5, q5, mask=[[True]]),
        TypeError,
        r"mask must be a tensor, got list",
    ),
    # --- CheckedMultiHeadAttention: snippets/multi_head/multi_head_attention.py
    # ---------------------------------
    (
        "mha-keep-causal-mask",
        lambda: mha()(x5, attn_mask=causal_keep),
        ValueError,
        r"query 4 .*sees no key.*True = hidden, as in nn\.MultiheadAttention",
    ),
    (
        "mha-keep-padding-mask",
        lambda: mha()(x5, key_padding_mask=torch.ones(2, 5, dtype=torch.bool)),
        ValueError,
        r"query 0 \(index \[0, 0\]\) sees no key.*F\.scaled_dot_product_attention",
    ),
    (
        "mha-keep-padding-unbatched",
        lambda: mha()(x5[0], key_padding_mask=torch.ones(5, dtype=torch.bool)),
        ValueError,
        r"sees no key.*True = hidden",
    ),
    (
        "mha-all-hidden-attn-mask",
        lambda: mha()(x5, attn_mask=torch.ones(5, 5, dtype=torch.bool)),
        ValueError,
        r"query 0 \(index \[0\]\) sees no key",
    ),
    (
        "mha-causal-plus-left-padding",
        lambda: mha()(
            x5,
            attn_mask=causal_hide,
            key_padding_mask=torch.tensor([[False] * 5, [True] + [False] * 4]),
        ),
        ValueError,
        r"query 0 \(index \[1, 0\]\) sees no key",
    ),
    (
        "mha-float16-input",
        lambda: mha()(x5.half()),
        TypeError,
        r"x \(2, 5, 12\) is torch\.float16 on cpu, but the module's parameters are torch\.float32",
    ),
    (
        "mha-float64-input",
        lambda: mha()(x5.double()),
        TypeError,
        r"x \(2, 5, 12\) is torch\.float64.*parameters are torch\.float32",
    ),
    (
        "mha-bfloat16-input-unbatched",
        lambda: mha()(x5[0].bfloat16()),
        TypeError,
        r"x \(5, 12\) is torch\.bfloat16.*parameters are torch\.float32",
    ),
    (
        "mha-float32-input-float64-module",
        lambda: mha(f64)(x5),
        TypeError,
        r"x \(2, 5, 12\) is torch\.float32.*parameters are torch\.float64",
    ),
    (
        "mha-check-input-weight-dtype",
        lambda: check_input(x5, 12, weight=torch.zeros(1, dtype=f16)),
        TypeError,
        r"torch\.float32 on cpu, but the module's parameters are torch\.float16 on cpu",
    ),
    ("mha-list-x", lambda: mha()([[0.0] * 12]), TypeError, r"x must be a tensor, got list"),
    (
        "mha-list-attn-mask",
        lambda: mha()(x5, attn_mask=[[False] * 5] * 5),
        TypeError,
        r"attn_mask must be bool \(True = do not attend\), got list",
    ),
    (
        "mha-wrong-rank",
        lambda: mha()(x5[0, 0]),
        ValueError,
        r"x must be \(B, L, d_model\) or \(L, d_model\), got shape \(12,\)",
    ),
    (
        "mha-wrong-E",
        lambda: mha()(x5[..., :10]),
        ValueError,
        r"x \(2, 5, 10\) has d_model = 10, expected embed_dim = 12",
    ),
    (
        "mha-empty-sequence",
        lambda: mha()(x5[:, :0]),
        ValueError,
        r"at least one token, got shape \(2, 0, 12\)",
    ),
    (
        "mha-int-x",
        lambda: mha()(x5.long()),
        TypeError,
        r"x must be float, got torch\.int64, shape \(2, 5, 12\)",
    ),
    (
        "mha-float-attn-mask",
        lambda: mha()(x5, attn_mask=torch.zeros(5, 5)),
        TypeError,
        r"attn_mask must be bool \(True = do not attend\), got torch\.float32",
    ),
    (
        "mha-attn-mask-shape",
        lambda: mha()(x5, attn_mask=causal_hide[:4, :4]),
        ValueError,
        r"attn_mask must have shape \(5, 5\) for x of shape \(2, 5, 12\), got \(4, 4\)",
    ),
    (
        "mha-padding-mask-shape",
        lambda: mha()(x5, key_padding_mask=torch.zeros(5, dtype=torch.bool)),
        ValueError,
        r"key_padding_mask must have shape \(2, 5\) for x of shape \(2, 5, 12\), got \(5,\)",
    ),
    (
        "mha-E-not-divisible-by-H",
        lambda: CheckedMultiHeadAttention(10, 3),
        ValueError,
        r"embed_dim = 10 is not divisible by num_heads = 3",
    ),
    # --- checked_add_positions: snippets/positional_encoding/learned.py
    # -------------------------------------------
    (
        "add-positions-token-ids",
        lambda: add_positions(torch.zeros(2, 10, dtype=long), table),
        TypeError,
        r"x \(2, 10\) must be float embeddings, got torch\.int64",
    ),
    (
        "add-positions-arguments-swapped",
        lambda: add_positions(table, ones(2, 10, 64)),
        TypeError,
        r"need \(x tensor, table nn\.Embedding\), got Embedding, Tensor",
    ),
    (
        "add-positions-table-weight-not-module",
        lambda: add_positions(ones(2, 10, 64), table.weight),
        TypeError,
        r"need \(x tensor, table nn\.Embedding\), got Tensor, Parameter",
    ),
    (
        "add-positions-wrong-E",
        lambda: add_positions(ones(2, 10, 32), table),
        ValueError,
        r"x \(2, 10, 32\) must be \(B, L, d_model\) or \(L, d_model\), d_model = 64",
    ),
    (
        "add-positions-1d-x",
        lambda: add_positions(ones(64), table),
        ValueError,
        r"x \(64,\) must be \(B, L, d_model\) or \(L, d_model\), d_model = 64",
    ),
    (
        "add-positions-4d-x",
        lambda: add_positions(ones(2, 3, 10, 64), table),
        ValueError,
        r"x \(2, 3, 10, 64\) must be \(B, L, d_model\) or \(L, d_model\)",
    ),
    (
        "add-positions-too-long",
        lambda: add_positions(ones(1, 600, 64), table),
        ValueError,
        r"x \(1, 600, 64\) has 600 positions, but the table has only 512 rows",
    ),
    (
        "add-positions-list-x",
        lambda: add_positions([[0.0] * 64], table),
        TypeError,
        r"need \(x tensor, table nn\.Embedding\), got list, Embedding",
    ),
    # --- decoder_mask: snippets/decoding/tiny_decoder.py
    # --------------------------------------------------
    (
        "decoder-mask-L-greater-than-S",
        lambda: decoder_mask(5, 3),
        ValueError,
        r"need 1 <= L_q <= L_k, got L_q = 5 queries, L_k = 3 keys.*no key",
    ),
    (
        "decoder-mask-L-zero",
        lambda: decoder_mask(0, 3),
        ValueError,
        r"got L_q = 0 queries, L_k = 3 keys",
    ),
    (
        "decoder-mask-float-pad",
        lambda: decoder_mask(3, 3, torch.zeros(2, 3)),
        TypeError,
        r"pad must be bool \(True at padding\), got torch\.float32",
    ),
    (
        "decoder-mask-pad-wrong-S",
        lambda: decoder_mask(3, 3, torch.zeros(2, 4, dtype=torch.bool)),
        ValueError,
        r"pad must be \(B, L_k = 3\), got \(2, 4\)",
    ),
    (
        "decoder-mask-pad-1d",
        lambda: decoder_mask(3, 3, torch.zeros(3, dtype=torch.bool)),
        ValueError,
        r"pad must be \(B, L_k = 3\), got \(3,\)",
    ),
    # --- TinyDecoder: snippets/decoding/tiny_decoder.py
    # ---------------------------------------------------
    (
        "decoder-token-id-equals-vocab",
        lambda: decoder()(torch.tensor([[1, 16, 2]])),
        ValueError,
        r"token id 16 is out of range: 16 rows, ids 0\.\.15",
    ),
    (
        "decoder-token-id-large-in-row-1",
        lambda: decoder()(torch.tensor([[1, 2], [3, 1000]])),
        ValueError,
        r"token id 1000 is out of range",
    ),
    (
        "decoder-token-id-negative",
        lambda: decoder()(torch.tensor([[-1, 2]])),
        ValueError,
        r"token id -1 is out of range: 16 rows",
    ),
    (
        "decoder-bool-tokens",
        lambda: decoder()(tokens > 2),
        TypeError,
        r"tokens must be integer ids, got torch\.bool",
    ),
    (
        "decoder-float-tokens",
        lambda: decoder()(tokens.float()),
        TypeError,
        r"tokens must be integer ids, got torch\.float32",
    ),
    (
        "decoder-negative-position",
        lambda: decoder()(tokens, positions=tokens - 2),
        ValueError,
        r"position id -1 is out of range: 64 rows, ids 0\.\.63",
    ),
    (
        "decoder-float-positions",
        lambda: decoder()(tokens, positions=tokens.float()),
        TypeError,
        r"position ids must be integers, got torch\.float32",
    ),
    (
        "decoder-position-past-table",
        lambda: decoder()(tokens, positions=tokens + 60),
        ValueError,
        r"position 66 is past the position table: max_len = 64",
    ),
    (
        "decoder-1d-tokens",
        lambda: decoder()(tokens[0]),
        ValueError,
        r"tokens must be \(B, L\), L >= 1, got \(3,\)",
    ),
    (
        "decoder-pad-shape",
        lambda: decoder()(tokens, pad=torch.zeros(2, 4, dtype=torch.bool)),
        ValueError,
        r"pad \(2, 4\) must be \(B, L_k\) = \(2, 3\)",
    ),
    (
        "decoder-float-pad",
        lambda: decoder()(tokens, pad=torch.zeros(2, 3)),
        TypeError,
        r"pad must be bool \(True at padding\), got torch\.float32",
    ),
    (
        "decoder-too-long",
        lambda: decoder()(torch.ones(1, 65, dtype=long)),
        ValueError,
        r"position 64 is past the position table",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_raises_the_exact_error_with_a_message_naming_the_problem(call, error, message):
    with pytest.raises(Exception) as info:
        call()
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert info.match(message)


def test_the_table_has_at_least_sixty_cases_with_unique_names():
    assert len(CASES) >= 60
    assert len({c[0] for c in CASES}) == len(CASES)


# --- RoPE in half precision
# -----------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [rope], ids=["checked_rope"])
@pytest.mark.parametrize("half", [f16, bf16], ids=["float16", "bfloat16"])
def test_rope_in_float16_and_bfloat16_stays_within_1e_2_of_float64_up_to_position_8192(
    fn, half, device
):
    g = torch.Generator().manual_seed(0)
    x = (torch.rand(8193, 64, generator=g) * 2 - 1).to(half).to(device)  # d = 64, |x| <= 1
    positions = torch.arange(8193, device=device)
    out = fn(x, positions)
    assert out.dtype == half and out.shape == x.shape
    expected = fn(x.double(), positions)  # the same numbers, rotated in float64
    error = (out.double() - expected).abs().amax(dim=-1)
    assert bool(error.isfinite().all())
    assert error.max().item() < 1e-2, (
        f"max error {error.max().item():.3g} at position {error.argmax().item()}"
    )


def test_rope_half_precision_survives_positions_past_float16_range():
    x = torch.ones(1, 8, dtype=f16)
    out = rope(x, torch.tensor([70000]))
    expected = rope(x.double(), torch.tensor([70000]))
    assert bool(out.isfinite().all())
    torch.testing.assert_close(out.double(), expected, atol=1e-2, rtol=0)


# --- valid input passes: the shapes the pages use
# -------------------------------------------------------


@pytest.mark.parametrize(
    ("x_shape", "positions"),
    [
        ((2, 6, 8), torch.arange(6)),  # 6.4 agree: (B, L, d_k), (L,)
        ((1, 8), torch.tensor([3])),  # 6.4 relative: one token
        ((1, 2, 6, 8), torch.arange(6)),  # 6.4 in attention: (B, H, L, d_k), (L,)
        ((5, 8), torch.arange(5)),  # 6.4 pairing
        ((2, 3, 4, 8), torch.arange(8).view(2, 1, 4)),  # (B, 1, L): one row per sequence
        ((2, 4, 8), torch.arange(8).view(2, 4)),  # (B, L) for (B, L, d_k)
    ],
)
@pytest.mark.parametrize(
    "dtype_", [torch.float32, f64, f16, bf16], ids=["float32", "float64", "float16", "bfloat16"]
)
def test_rope_accepts_the_shapes_the_pages_use_and_keeps_the_dtype(x_shape, positions, dtype_):
    x = torch.ones(x_shape, dtype=dtype_)
    for fn in (rope,):
        out = fn(x, positions)
        assert out.shape == x.shape and out.dtype == dtype_


def test_rope_b_1_l_positions_rotate_each_sequence_by_its_own_positions():
    x = torch.randn(2, 2, 4, 8)
    positions = torch.tensor([[0, 1, 2, 3], [10, 11, 12, 13]])
    out = rope(x, positions[:, None, :])
    for b in range(2):
        torch.testing.assert_close(out[b], rope(x[b], positions[b]))


@pytest.mark.parametrize(
    "mask",
    [
        None,
        causal_keep,  # 3.9 causal keep mask (bool)
        # 3.9 padding (B, 1, 1, L)
        torch.tensor([[True] * 5, [True] * 3 + [False] * 2])[:, None, None, :],
        torch.randn(3, 5, 5),  # a float bias
        torch.zeros(5, 5),  # a float bias of zeros: nothing added
        # additive causal mask: 0 and -inf
        torch.zeros(5, 5).masked_fill(~causal_keep, float("-inf")),
    ],
    ids=["none", "bool-causal", "bool-padding", "float-bias", "float-zeros", "float-minus-inf"],
)
def test_attention_accepts_bool_masks_and_genuine_float_biases(mask):
    q = torch.randn(2, 3, 5, 8)
    out, weights = attention(q, q, q, mask=mask)
    assert out.shape == (2, 3, 5, 8) and weights.shape == (2, 3, 5, 5)


@pytest.mark.parametrize(
    "masks",
    [
        {},
        {"attn_mask": causal_hide},
        {
            "attn_mask": causal_hide,
            "key_padding_mask": torch.tensor([[False] * 5, [False] * 3 + [True] * 2]),
        },
        # one key left: enough
        {"key_padding_mask": torch.tensor([[False] * 5, [True] * 4 + [False]])},
    ],
    ids=["no-mask", "causal", "causal-and-padding", "all-but-one-key-padded"],
)
@pytest.mark.parametrize("dtype_", [torch.float32, f64], ids=["float32", "float64"])
def test_multi_head_attention_accepts_valid_masks_batched_and_unbatched(masks, dtype_):
    m = mha(dtype_)
    out, weights = m(x5.to(dtype_), **masks)
    assert out.shape == (2, 5, 12) and not out.isnan().any()
    unbatched = {k: v[1] if k == "key_padding_mask" else v for k, v in masks.items()}
    out0, _ = m(x5[1].to(dtype_), **unbatched)
    assert out0.shape == (5, 12)


def test_add_positions_accepts_batched_and_unbatched_embeddings():
    assert add_positions(ones(2, 10, 64), table).shape == (2, 10, 64)
    assert add_positions(ones(10, 64), table).shape == (10, 64)
    assert add_positions(ones(1, 512, 64), table).shape == (1, 512, 64)  # the whole table


def test_decoder_mask_accepts_every_L_up_to_S_with_and_without_padding():
    for L in range(1, 6):
        assert decoder_mask(L, 5).shape == (L, 5)
        assert decoder_mask(L, 5, torch.zeros(2, 5, dtype=torch.bool)).shape == (2, 1, L, 5)


def test_tiny_decoder_accepts_the_first_and_last_ids_positions_padding_and_a_cache():
    model = decoder().eval()
    with torch.no_grad():
        assert model(torch.tensor([[0, 15]])).shape == (1, 2, 16)
        assert model(tokens, positions=torch.tensor([[0, 1, 63], [0, 0, 1]])).shape == (2, 3, 16)
        pad = torch.tensor([[False] * 3, [True, False, False]])
        cache = KVCache()
        model(tokens, positions=torch.tensor([[0, 1, 2], [0, 0, 1]]), pad=pad, cache=cache)
        step_pad = torch.cat([pad, torch.zeros(2, 1, dtype=torch.bool)], dim=1)
        assert model(tokens[:, :1], torch.tensor([[3], [2]]), step_pad, cache).shape == (2, 1, 16)


def test_a_mask_in_the_attend_convention_given_to_multi_head_attention_is_not_silent():
    """True means 'attend' for F.scaled_dot_product_attention and 'do not attend' for
    MultiHeadAttention: a window mask in the first convention hides each query's own key in the
    second, and gets a warning saying so."""
    L = 5
    i = torch.arange(L)
    window = (i[:, None] - i[None, :]).abs() <= 1  # True = attend: itself and its neighbours
    with pytest.warns(UserWarning, match=r"hides every query's own key.*invert.*~mask"):
        mha()(x5, attn_mask=window)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mha()(x5, attn_mask=~window)  # the same mask in MultiHeadAttention's convention: no warning
