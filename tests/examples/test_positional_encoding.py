"""Chapter 6 (docs/positional-encoding.{zh,en}.md): snippets/positional_encoding/*, checked against
PyTorch."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

from figures.positional_encoding import COLUMNS, COUNTER, STARTS
from snippets.positional_encoding.alibi import alibi_bias, alibi_slopes
from snippets.positional_encoding.learned import add_positions
from snippets.positional_encoding.rope import check_rope_input, checked_rope, rope
from snippets.positional_encoding.sinusoidal import shift_matrix, sinusoidal_encoding
from tests.conftest import run_snippet


@pytest.fixture(scope="module")
def word_order():
    return run_snippet("positional_encoding/word_order.py")


@pytest.fixture(scope="module")
def rope_chapter():
    return run_snippet("positional_encoding/rope.py")


# --- 6.1 word order ------------------------------------------------------------


def test_without_positions_each_word_gets_the_same_vector_in_either_order(word_order):
    a, b, out_a, out_b = word_order["a"], word_order["b"], word_order["out_a"], word_order["out_b"]
    for word in a:
        assert_close(out_a[a.index(word)], out_b[b.index(word)], atol=1e-6, rtol=1e-5)
    assert_close(out_a.mean(dim=0), out_b.mean(dim=0), atol=1e-6, rtol=1e-5)


def test_nn_multihead_attention_without_positions_is_permutation_equivariant(device, dtype):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).to(device, dtype)
    x = torch.randn(2, 7, 16, dtype=dtype).to(device)
    perm = torch.randperm(7).to(device)
    with torch.no_grad():
        assert_close(mha(x[:, perm], x[:, perm], x[:, perm])[0], mha(x, x, x)[0][:, perm])


def test_with_positions_the_two_orders_differ(word_order):
    encode, positions = word_order["encode"], word_order["positions"]
    with torch.no_grad():
        a, b = encode(word_order["a"], positions), encode(word_order["b"], positions)
    assert not torch.allclose(a[0], b[2], atol=1e-3)  # "dog" as subject vs object
    assert not torch.allclose(a.mean(0), b.mean(0), atol=1e-3)


# --- 6.2 sinusoidal ------------------------------------------------------------


@pytest.mark.parametrize("length, d_model", [(1, 2), (10, 4), (50, 16), (64, 32)])
def test_sinusoidal_encoding_is_the_formula_of_section_3_5(length, d_model, device):
    pe = sinusoidal_encoding(length, d_model, device=device)
    expected = torch.tensor(
        [
            [
                (math.sin if dim % 2 == 0 else math.cos)(pos / 10000 ** ((dim - dim % 2) / d_model))
                for dim in range(d_model)
            ]
            for pos in range(length)
        ]
    )
    assert pe.shape == (length, d_model) and pe.device.type == device
    assert_close(pe.cpu(), expected.float(), atol=2e-5, rtol=0)


@pytest.mark.parametrize("k", [0, 1, 2, 7, 31])
def test_pe_of_pos_plus_k_is_a_fixed_rotation_of_pe_of_pos(k, device):
    pe = sinusoidal_encoding(64 + k, 32, device=device)
    M = shift_matrix(k, 32, device=device)
    assert_close(pe[:64] @ M.T, pe[k:], atol=2e-5, rtol=0)
    # a rotation: orthogonal
    assert_close(M @ M.T, torch.eye(32, device=device), atol=1e-6, rtol=0)


def test_dot_product_of_encodings_depends_only_on_the_offset_and_not_its_sign():
    pe = sinusoidal_encoding(40, 16).double()
    G = pe @ pe.T
    omega = 10000.0 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16)
    for p in range(40):
        for q in range(40):
            assert abs(G[p, q] - torch.cos((p - q) * omega).sum()) < 1e-4
    assert_close(G, G.T)


@pytest.fixture(scope="module")
def sinusoidal():
    return run_snippet("positional_encoding/sinusoidal.py")


def test_projected_encodings_lose_the_relative_property(sinusoidal):
    diagonal = sinusoidal["scores"].diagonal(5)
    # the page prints its first four values: they differ by far more than their rounding
    assert float(diagonal[:4].max() - diagonal[:4].min()) > 0.5
    assert not torch.allclose(diagonal, diagonal[:1].expand_as(diagonal), atol=1e-3)


def test_figure_pe_sinusoid_columns_go_from_fast_to_slow_and_the_last_is_nearly_constant(
    sinusoidal,
):
    pe = sinusoidal["pe"].double().cpu()
    change = [pe[:, c].diff().abs().sum().item() for c in COLUMNS]  # the four columns plotted
    assert change == sorted(change, reverse=True) and len(set(change)) == len(COLUMNS)
    # the alt text: fast columns on the left, nearly constant ones on the right
    spread = pe.amax(dim=0) - pe.amin(dim=0)
    assert float(spread[:2].min()) > 1.5 and float(spread[-2:].max()) < 0.02


def test_figure_pe_dot_product_curves_coincide_and_are_symmetric_about_zero(sinusoidal):
    G = sinusoidal["G"].double().cpu()
    assert G.shape == (64, 64)  # the alt text's 64 × 64
    length = len(G)
    curves = {p: {q - p: float(G[p, q]) for q in range(length)} for p in STARTS}
    for p in STARTS:
        for other in STARTS:
            for k in curves[p].keys() & curves[other].keys():
                assert abs(curves[p][k] - curves[other][k]) < 1e-4  # they coincide
        for k in curves[p]:
            if -k in curves[p]:
                assert abs(curves[p][k] - curves[p][-k]) < 1e-4  # symmetric about k = 0
    assert float(G.diagonal().max() - G.diagonal().min()) < 1e-4  # top: one colour per diagonal


# --- 6.3 learned positions ----------------------------------------------------------


def test_learned_positions_add_the_first_rows_of_nn_embedding(device, dtype):
    torch.manual_seed(0)
    table = nn.Embedding(16, 8).to(device, dtype)
    x = torch.randn(3, 5, 8, dtype=dtype).to(device)
    assert_close(add_positions(x, table), x + table.weight[:5])
    assert_close(add_positions(x, table), x + table(torch.arange(5, device=device)))


def test_position_table_costs_max_len_times_d_model_parameters():
    ns = run_snippet("positional_encoding/learned.py")
    assert (
        ns["params"]
        == ns["max_len"] * ns["d_model"]
        == sum(p.numel() for p in nn.Embedding(512, 64).parameters())
    )


def test_sequences_longer_than_the_table_are_refused_with_the_shapes():
    table = nn.Embedding(512, 4)
    with pytest.raises(
        ValueError, match=r"x \(1, 513, 4\) has 513 positions, but the table has only 512 rows"
    ):
        add_positions(torch.zeros(1, 513, 4), table)
    with pytest.raises(IndexError, match="index out of range"):
        table(torch.tensor([512]))  # what nn.Embedding itself says, on the CPU


def test_only_positions_seen_in_training_receive_gradients():
    ns = run_snippet("positional_encoding/learned.py")
    grad = ns["pos_table"].weight.grad
    assert bool((grad[: ns["train_len"]].abs().sum(-1) > 0).all())
    assert bool((grad[ns["train_len"] :] == 0).all())


# --- 6.4 RoPE ------------------------------------------------------------------


def rotation_reference(x, positions, base=10000.0):
    """RoPE by explicit block-diagonal rotation matrices, one per position (RoFormer eq. 13-15)."""
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    out = torch.empty_like(x, dtype=torch.float64)
    for index, m in enumerate(positions.tolist()):
        angles = [m * float(t) for t in theta]
        blocks = [
            torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) for a in angles
        ]
        R = torch.block_diag(*blocks).to(torch.float64)
        out[..., index, :] = x[..., index, :].double().cpu() @ R.T
    return out


@pytest.mark.parametrize(
    "shape", [(6, 8), (2, 6, 8), (2, 3, 6, 16)], ids=["L-d", "B-L-d", "B-H-L-d"]
)
def test_rope_and_checked_rope_equal_explicit_rotation_matrices(shape, device, dtype):
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=dtype).to(device)
    positions = torch.tensor([0, 1, 2, 5, 40, 300], device=device)
    expected = rotation_reference(x.cpu(), positions.cpu())
    tol = {"atol": 1e-5, "rtol": 1e-5} if dtype == torch.float32 else {}
    assert_close(rope(x, positions).cpu().double(), expected, **tol)
    assert_close(checked_rope(x, positions), rope(x, positions), **tol)


def test_one_pair_turns_by_its_position_in_radians_and_keeps_the_angle_between_q_and_k(
    rope_chapter,
):
    direction, device = rope_chapter["direction"], rope_chapter["device"]
    q, k = rope_chapter["pair_q"], rope_chapter["pair_k"]
    placements = rope_chapter["placements"]
    assert len({i - j for i, j in placements}) == 1  # Figure 6-4: one distance, two placements

    def angle(i, j):
        q_i, k_j = (rope(v, torch.tensor([p], device=device)) for v, p in ((q, i), (k, j)))
        assert abs(direction(q_i) - math.degrees(i) % 360) < 1e-3  # theta_0 = 1 rad per position
        return (direction(k_j) - direction(q_i)) % 360

    for i, j in [*placements, (10, 9), (100, 99)]:
        assert abs(angle(i, j) - (90 - math.degrees(1))) < 1e-3  # 32.7 degrees, printed
    assert abs(angle(3, 0) - angle(1, 0)) > 1  # another distance, another angle


def test_sine_columns_change_more_slowly_from_pair_to_pair_like_the_bits_of_a_counter():
    length, n = COUNTER  # Figure 6-1's caption: positions 0 to 15, pairs 0 to 3
    assert (length, n) == (16, 4)
    pe = sinusoidal_encoding(length, 32).double()
    change = [pe[:, 2 * p].diff().abs().sum().item() for p in range(n)]
    assert change == sorted(change, reverse=True) and len(set(change)) == n
    flips = [sum((i >> b) & 1 != ((i + 1) >> b) & 1 for i in range(length - 1)) for b in range(n)]
    assert flips == [15, 7, 3, 1]  # each bit flips half as often as the one before


def test_rope_keeps_lengths_and_leaves_position_zero_alone(device):
    x = torch.randn(3, 10, 8).to(device)
    positions = torch.arange(10, device=device)
    out = rope(x, positions)
    assert_close(out.norm(dim=-1), x.norm(dim=-1))
    assert_close(out[:, 0], x[:, 0])


def test_rope_accepts_positions_per_sequence(device):
    x = torch.randn(2, 4, 5, 8).to(device)  # (B, H, L, d_k)
    positions = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]], device=device)
    out = rope(x, positions[:, None, :])  # (B, 1, L): one row of positions per sequence
    assert_close(out[0], rope(x[0], positions[0]))
    assert_close(out[1], rope(x[1], positions[1]))


def test_rope_scores_depend_only_on_the_relative_position(dtype):
    torch.manual_seed(0)
    q, k = torch.randn(2, 1, 16, dtype=dtype)

    def score(m, n):
        return (rope(q, torch.tensor([m])) * rope(k, torch.tensor([n]))).sum()

    for offset in [-9, -1, 0, 2, 13]:
        scores = torch.stack([score(n + offset, n) for n in [0, 3, 50, 200]])
        assert_close(
            scores, scores[:1].expand(4), atol=1e-4 if dtype == torch.float32 else 1e-10, rtol=0
        )
    assert not torch.allclose(score(3, 0), score(0, 3))  # before and after differ


def test_chapter_rope_scores_printed_equal_for_equal_offsets(rope_chapter):
    score = rope_chapter["score"]
    assert_close(score(3, 0), score(103, 100))
    grid = rope_chapter["grid"]
    for k in range(-15, 16):
        assert_close(grid.diagonal(k), grid.diagonal(k)[:1].expand(16 - abs(k)).contiguous())


def test_figure_rope_scores_marks_the_printed_scores_and_the_curve_is_not_symmetric(rope_chapter):
    offsets, by_offset, score = (rope_chapter[n] for n in ("offsets", "by_offset", "score"))
    assert rope_chapter["grid"].shape == (16, 16)  # the alt text's 16 × 16
    curve = dict(zip(offsets, by_offset, strict=True))
    # the two marked points are the printed i=3, j=0 and i=0, j=3, at different heights
    assert abs(curve[3] - score(3, 0).item()) < 1e-9 and abs(curve[-3] - score(0, 3).item()) < 1e-9
    assert abs(curve[3] - curve[-3]) > 0.1
    assert max(abs(curve[k] - curve[-k]) for k in offsets) > 0.1  # not symmetric about 0


def test_rope_in_attention_is_shift_invariant_only_while_v_is_not_rotated(rope_chapter):
    attention, device = rope_chapter["attention"], rope_chapter["device"]
    torch.manual_seed(5)
    x = torch.randn(1, 6, 16).to(device)
    positions = torch.arange(6, device=device)
    out = attention(x, positions)
    for shift in [1, 37, 250]:
        assert_close(attention(x, positions + shift), out, atol=1e-4, rtol=1e-4)
        assert not torch.allclose(attention(x, positions + shift, rotate_v=True), out, atol=1e-3)


def test_rope_attention_equals_softmax_of_rotated_scores(device, dtype):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 7, 8, dtype=dtype).to(device) for _ in range(3))
    positions = torch.arange(7, device=device)
    qr, kr = rope(q, positions), rope(k, positions)
    by_hand = torch.softmax(qr @ kr.transpose(-2, -1) / 8**0.5, dim=-1) @ v
    assert_close(F.scaled_dot_product_attention(qr, kr, v), by_hand)


@pytest.mark.parametrize(
    "x, positions, error, message",
    [
        (
            torch.ones(4, 7),
            torch.arange(4),
            ValueError,
            r"d_k = 7 must be even to form pairs: x \(4, 7\)",
        ),
        (
            torch.ones(4, 8),
            torch.arange(5),
            ValueError,
            r"broadcast to \(\.\.\., L\): x \(4, 8\), positions \(5,\)",
        ),
        (
            torch.ones(2, 4, 8),
            torch.zeros(3, 4, dtype=torch.long),
            ValueError,
            r"positions \(3, 4\)",
        ),
        (torch.ones(4, 8), torch.tensor(3), ValueError, r"positions \(\)"),
        (
            torch.ones(4, 8),
            torch.arange(4.0),
            TypeError,
            "positions must be integers, got torch.float32",
        ),
        (
            torch.ones(4, 8, dtype=torch.long),
            torch.arange(4),
            TypeError,
            r"float \(\.\.\., L, d_k\) tensor: x \(4, 8\)",
        ),
        (torch.ones(8), torch.arange(1), TypeError, r"x \(8,\)"),
    ],
    ids=[
        "odd-d",
        "too-many-positions",
        "wrong-batch",
        "scalar-positions",
        "float-positions",
        "int-x",
        "1d-x",
    ],
)
def test_rope_bad_input_names_the_shapes(x, positions, error, message):
    for fn in (checked_rope, check_rope_input):
        with pytest.raises(error, match=message):
            fn(x, positions)


# --- 6.5 ALiBi -----------------------------------------------------------------


def reference_slopes(n):
    """The slopes of the ALiBi authors' code (get_slopes), written independently."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + reference_slopes(2 * closest)[0::2][: n - closest]


@pytest.mark.parametrize("heads", [1, 2, 3, 6, 8, 12, 16, 20, 32])
def test_alibi_slopes_match_the_authors_schedule(heads):
    assert_close(alibi_slopes(heads), torch.tensor(reference_slopes(heads)))


def test_alibi_slopes_for_eight_heads_are_one_half_to_one_256th():
    assert alibi_slopes(8).tolist() == [2.0**-i for i in range(1, 9)]


def test_alibi_bias_is_causal_and_linear_in_the_distance(device):
    bias = alibi_bias(4, 9, device=device)
    slopes = alibi_slopes(4).to(device)
    for i in range(9):
        for j in range(9):
            if j > i:
                assert bool(torch.isneginf(bias[:, i, j]).all())
            else:
                assert_close(bias[:, i, j], -slopes * (i - j))


def test_alibi_bias_as_sdpa_float_mask_equals_softmax_by_hand(device, dtype):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 8, 6, 4, dtype=dtype).to(device) for _ in range(3))
    bias = alibi_bias(8, 6, device=device).to(dtype)
    by_hand = torch.softmax(q @ k.transpose(-2, -1) / 2 + bias, dim=-1) @ v
    assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=bias), by_hand)


def test_nn_multihead_attention_takes_the_alibi_bias_as_a_float_mask(device, dtype):
    torch.manual_seed(0)
    B, L, E, H = 2, 5, 16, 4
    mha = nn.MultiheadAttention(E, H, batch_first=True).to(device, dtype)
    x = torch.randn(B, L, E, dtype=dtype).to(device)
    bias = alibi_bias(H, L, device=device).to(dtype)
    with torch.no_grad():
        out = mha(x, x, x, attn_mask=bias.repeat(B, 1, 1), need_weights=False)[0]  # (B*H, L, L)
        q, k, v = F.linear(x, mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)
        heads = [t.view(B, L, H, E // H).transpose(1, 2) for t in (q, k, v)]
        mixed = (
            F.scaled_dot_product_attention(*heads, attn_mask=bias).transpose(1, 2).reshape(B, L, E)
        )
        assert_close(out, mha.out_proj(mixed))


def test_figure_alibi_bias_large_slopes_favour_the_nearest_keys_small_ones_treat_all_alike():
    ns = run_snippet("positional_encoding/alibi.py")
    bias, slopes = ns["figure_bias"], ns["figure_slopes"]
    assert bias.shape == (8, 8, 8)  # the alt text: eight heads, one 8 × 8 matrix each
    L = bias.shape[-1]
    last_row = bias[:, L - 1].softmax(dim=-1)  # what the bias alone does to the last query
    uniform = 1 / L
    assert slopes[0] == slopes.max() and float(last_row[0, -1]) > 3 * uniform  # slope 1/2
    assert slopes[-1] == slopes.min() and float(last_row[-1].max() / last_row[-1].min()) < 1.05
    # more negative towards the lower left, paler (less negative) for smaller slopes
    assert bool((bias[:, L - 1].diff(dim=-1) > 0).all())
    corners = bias[:, L - 1, 0]
    assert bool((corners.diff() > 0).all())


def test_half_split_pairing_is_the_same_rotation_on_reordered_features(device):
    # feature p paired with p + d_k/2: interleave the two halves, rotate, split them again
    torch.manual_seed(0)
    d_k = 8
    x = torch.randn(5, d_k).to(device)
    positions = torch.arange(5, device=device)
    order = torch.arange(d_k).view(2, -1).T.flatten().to(device)  # 0, 4, 1, 5, 2, 6, 3, 7
    angles = positions[:, None] * 10000.0 ** (-torch.arange(0, d_k, 2, device=device) / d_k)
    x1, x2 = x[:, : d_k // 2], x[:, d_k // 2 :]
    cos, sin = angles.cos(), angles.sin()
    half_split = torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    assert_close(rope(x[:, order], positions), half_split[:, order])


def test_alibi_windows_of_a_long_sequence_equal_the_short_bias():
    assert torch.equal(alibi_bias(8, 50)[:, 20:30, 20:30], alibi_bias(8, 10))


# --- corrections ---------------------------------------------------------------


@pytest.mark.parametrize("optimizer", ["SGD", "AdamW"])
def test_rows_never_seen_in_training_keep_their_initial_values_or_only_shrink_under_weight_decay(
    optimizer, device
):
    torch.manual_seed(0)
    table = nn.Embedding(32, 8).to(device)
    start = table.weight.detach().clone()
    lr, weight_decay, steps, train_len = 0.01, 0.1, 15, 5
    if optimizer == "SGD":  # no weight decay: untouched rows stay exactly as they were
        opt, shrink = torch.optim.SGD(table.parameters(), lr=lr, momentum=0.9), 1.0
    else:  # AdamW's decoupled decay multiplies every parameter by (1 - lr * weight_decay) per step
        opt = torch.optim.AdamW(table.parameters(), lr=lr, weight_decay=weight_decay)
        shrink = (1 - lr * weight_decay) ** steps
    for _ in range(steps):
        x = torch.randn(3, train_len, 8).to(device)
        loss = add_positions(x, table).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        assert bool((table.weight.grad[train_len:] == 0).all())
        opt.step()
    weight = table.weight.detach()
    assert_close(weight[train_len:], start[train_len:] * shrink, rtol=1e-5, atol=1e-6)
    # the seen rows learned
    assert not torch.allclose(weight[:train_len], start[:train_len] * shrink, atol=1e-3)


# --- exercises -----------------------------------------------------------------


@pytest.fixture(scope="module")
def exercises():
    return run_snippet("positional_encoding/exercises.py")


def test_exercise_rebuilds_the_chapters_encoding_and_shift_matrix(exercises):
    ns = exercises
    device = ns["device"]
    assert_close(ns["pe"], sinusoidal_encoding(64, 32, device=device), atol=1e-6, rtol=0)
    assert_close(ns["M"], shift_matrix(3, 32, device=device))


def test_shift_matrix_as_w_k_makes_every_query_peak_three_keys_back_and_tells_before_from_after(
    exercises,
):
    ns = exercises
    scores = ns["scores"].double().cpu()
    omega = 10000.0 ** (-torch.arange(0, 32, 2, dtype=torch.float64) / 32)
    p, q = torch.arange(64)[:, None], torch.arange(64)[None, :]
    expected = torch.cos((p - q - 3)[..., None] * omega).sum(-1)  # sum_i cos((p - q - 3) ω_i)
    assert_close(scores, expected, atol=1e-4, rtol=0)
    assert bool((scores[3:].argmax(-1) == torch.arange(61)).all())
    assert scores[10, 7] > scores[10, 13] + 4  # 16 against sum_i cos(6 ω_i)
    assert_close(scores[10, 13], torch.cos(6 * omega).sum(), atol=1e-4, rtol=0)


def test_exercise_adamw_leaves_unseen_rows_at_their_initial_values_times_the_decay(exercises):
    ns = exercises
    shrink = (1 - ns["lr"] * ns["weight_decay"]) ** ns["steps"]
    assert round(shrink, 4) == 0.9802
    weight = ns["pos_table"].weight.detach()
    assert_close(weight[8:], ns["start"][8:] * shrink, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(weight[:8], ns["start"][:8] * shrink, atol=1e-3)
    # the page prints the largest change besides the decay: 0 (rounded) for the unseen rows
    rest = ns["rest"]
    assert float(rest[8:].max()) < 1e-5 and float(rest[:8].max()) > 0.1
