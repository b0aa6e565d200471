"""Chapter 7 (docs/learned-attention.{zh,en}.md): snippets/learned_attention/*, checked against
PyTorch.

The page prints the trained models' loss, accuracy and weights, rounded; its output fences
say how close another device, thread count or CPU code path must come. The claims the prose,
captions and alt texts make about those values are checked here, with margins.
"""

import functools
import io
import math
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

from figures.learned_attention import SNAPSHOTS
from qkvsite.pytest_plugin import numbers_agree
from snippets.learned_attention import reversal
from snippets.learned_attention.reversal import (
    L,
    Reverser,
    evaluate,
    make_batch,
    reverse,
    train,
    vocab_size,
)
from snippets.positional_encoding.sinusoidal import shift_matrix, sinusoidal_encoding
from tests.conftest import ROOT, run_snippet

RIGHT = torch.arange(L - 1, -1, -1)  # query i -> key L-1-i
ROWS = torch.arange(L)


def run_printing(path):
    printed = io.StringIO()
    ns = run_snippet(path, stdout=printed)
    return {**ns, "printed": printed.getvalue()}


@pytest.fixture(scope="module")
def chapter():
    """Variables of the chapter's script after it ran (two models trained), and what it printed."""
    return run_printing("learned_attention/reversal.py")


@pytest.fixture(scope="module")
def exercises():
    return run_printing("learned_attention/exercises.py")


@functools.cache
def trained(device, positions, seed=1, data_seed=0):
    """A model trained as on the page (model seed 1, data seed 0 there), its test set, losses and
    log."""
    x_test = make_batch(1000, torch.Generator().manual_seed(1), device=device)
    torch.manual_seed(seed)
    model = Reverser(positions=positions).to(device)
    losses, log = train(model, x_test, seed=data_seed)
    return model, x_test, losses, log


def weight_on_right_keys(weights):
    return weights[:, ROWS, RIGHT.to(weights.device)]


def margin(weights):
    """Smallest gap, over all rows, between the weight on the right key and the largest other
    weight."""
    right = weight_on_right_keys(weights)
    others = weights.clone()
    others[:, ROWS, RIGHT.to(weights.device)] = -1
    return float((right - others.amax(dim=-1)).min())


def assert_the_pages_claims(model, blind, x_test):
    accuracy, weights = evaluate(model, x_test)
    assert accuracy > 0.99
    assert bool((weights.argmax(dim=-1) == RIGHT.to(weights.device)).all())
    assert weight_on_right_keys(weights).mean() > 0.9
    accuracy, weights = evaluate(blind, x_test)
    assert accuracy < 0.2
    assert weight_on_right_keys(weights).mean() < 0.9


# --- 7.1 the task -----------------------------------------------------------------------


def test_batches_hold_distinct_tokens_and_the_target_is_the_sequence_backwards(device):
    x = make_batch(100, torch.Generator().manual_seed(0), device=device)
    assert x.shape == (100, L) and x.device.type == device and x.dtype == torch.int64
    assert bool(((x >= 0) & (x < vocab_size)).all())
    assert all(len(set(row)) == L for row in x.tolist())
    y = reverse(x)
    for i in range(L):
        assert torch.equal(y[:, i], x[:, L - 1 - i])


def test_the_same_seed_gives_the_same_batches_on_every_device(device):
    on_device = make_batch(50, torch.Generator().manual_seed(3), device=device)
    assert torch.equal(
        on_device.cpu(), make_batch(50, torch.Generator().manual_seed(3), device="cpu")
    )


# --- 7.2 the model ----------------------------------------------------------------------


@pytest.mark.parametrize("positions", [True, False], ids=["with-positions", "without-positions"])
def test_the_model_is_scaled_dot_product_attention_between_embeddings_and_a_readout(
    positions, device, dtype
):
    torch.manual_seed(0)
    model = Reverser(positions=positions).to(device, dtype)
    tokens = make_batch(4, torch.Generator().manual_seed(0), device=device)
    x = model.tok(tokens) + (model.pos.weight if positions else 0)
    w_q, w_k, w_v = model.mha.in_proj_weight.chunk(3)
    Q, K, V = x @ w_q.T, x @ w_k.T, x @ w_v.T
    d_k = model.mha.head_dim
    with torch.no_grad():
        logits, weights = model(tokens)
        assert_close(weights, torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(d_k), dim=-1))
        out = F.scaled_dot_product_attention(Q, K, V) @ model.mha.out_proj.weight.T
        assert_close(logits, model.out(out))
    assert logits.shape == (4, L, vocab_size) and weights.shape == (4, L, L)


def test_the_parameter_count_is_the_sum_the_page_spells_out():
    E = 32
    count = vocab_size * E + L * E + 3 * E * E + E * E + (E * vocab_size + vocab_size)
    assert sum(p.numel() for p in Reverser().parameters()) == count == 5392
    assert sum(p.numel() for p in Reverser(positions=False).parameters()) == count - L * E


def test_without_positions_the_model_is_permutation_equivariant(device, dtype):
    torch.manual_seed(0)
    blind = Reverser(positions=False).to(device, dtype)
    tokens = make_batch(3, torch.Generator().manual_seed(0), device=device)
    perm = torch.randperm(L, generator=torch.Generator().manual_seed(1)).to(device)
    with torch.no_grad():
        logits, weights = blind(tokens)
        logits_p, weights_p = blind(tokens[:, perm])
    assert_close(logits_p, logits[:, perm])
    assert_close(weights_p, weights[:, perm][:, :, perm])


def test_before_training_accuracy_is_near_guessing_and_the_printed_argmax_has_a_margin(chapter):
    step, accuracy, _ = chapter["log"][0]
    assert step == 0 and abs(accuracy - 1 / vocab_size) < 0.03
    # the page prints this untrained attention's argmax: rounding elsewhere must not flip it
    top2 = chapter["untrained"].topk(2, dim=-1).values
    assert float((top2[:, 0] - top2[:, 1]).min()) > 1e-3


# --- 7.3-7.4 training and the trained attention --------------------------------------------


def test_the_trained_model_reverses_the_test_sequences(chapter):
    accuracy, _ = evaluate(chapter["model"], chapter["x_test"])
    assert accuracy > 0.99
    assert chapter["losses"][-1] < 0.01
    # the page: the first loss is close to ln 16, a guess spread over all 16 tokens
    assert abs(chapter["losses"][0] - math.log(vocab_size)) < 0.05


def test_figure_learned_before_after_first_sequence_over_90_percent_on_the_right_keys(chapter):
    # the alt text: after training the right keys hold over 90 % of each row, the rest close to 0
    first = chapter["weights"][0]
    right = first[ROWS, RIGHT.to(first.device)]
    assert float(right.min()) > 0.9
    assert float((first.sum(dim=-1) - right).max()) < 0.1


def test_the_trained_attention_argmax_is_the_anti_diagonal_with_a_wide_margin(chapter):
    weights = chapter["weights"]
    assert bool((weights.argmax(dim=-1) == RIGHT.to(weights.device)).all())
    assert margin(weights) > 0.2  # far from a tie: no device flips an argmax
    assert weight_on_right_keys(weights).mean() > 0.95


def test_the_anti_diagonal_appears_during_training(chapter):
    log = chapter["log"]
    steps = [step for step, _, _ in log]
    assert steps == list(range(0, 301, 10))
    assert set(SNAPSHOTS) <= set(steps)  # the steps figure learned-emergence draws
    first, last = (
        weight_on_right_keys(log[0][2][None]).mean(),
        weight_on_right_keys(log[-1][2][None]).mean(),
    )
    assert first < 0.3 < 0.95 < last
    assert log[0][1] < 0.1 and log[-1][1] > 0.99


def test_the_test_sequences_never_occur_in_the_training_batches(chapter):
    # the page: the model reverses test sequences "which it never trained on"
    g = torch.Generator().manual_seed(0)  # train()'s default seed, as on the page
    seen = {tuple(row) for _ in chapter["losses"] for row in make_batch(64, g, "cpu").tolist()}
    assert len(seen) == 64 * len(chapter["losses"])  # and no training sequence came twice
    assert not seen & {tuple(row) for row in chapter["x_test"].tolist()}


def test_figure_learned_emergence_the_right_keys_darken_from_snapshot_to_snapshot(chapter):
    by_step = {step: weights for step, _, weights in chapter["log"]}
    drawn = [*SNAPSHOTS, chapter["log"][-1][0]]
    on_right = [float(weight_on_right_keys(by_step[step][None]).mean()) for step in drawn]
    assert on_right == sorted(on_right) and len(set(on_right)) == len(drawn)


def test_figure_learned_training_curves_what_the_alt_text_says(chapter):
    losses, blind_losses = chapter["losses"], chapter["blind_losses"]
    # with positions: close to 0 within the first 100 steps
    assert max(losses[100:]) < 0.01
    # without: falling slowly, above the dashed line at ln 7 at every step
    assert blind_losses[-1] < blind_losses[0] and min(blind_losses) > math.log(7)
    # the test accuracy without positions: near 1/7 after step 100, on both sides of it
    later = [a for step, a, _ in chapter["blind_log"] if step >= 100]
    assert all(abs(a - 1 / 7) < 0.015 for a in later)
    assert min(later) < 1 / 7 < max(later)


def test_training_is_reproducible(chapter):
    _, _, losses, log = trained("cpu", True)
    # bit for bit: same seeds, same batches, same initial weights
    assert losses == chapter["losses"]
    assert all(torch.equal(a[2], b[2]) for a, b in zip(log, chapter["log"], strict=True))


def test_the_pages_claims_hold_on_every_device(device, chapter):
    if device == chapter["device"]:  # the chapter's own models: the same seeds as trained() gives
        model, blind, x_test = chapter["model"], chapter["blind"], chapter["x_test"]
    else:
        model, x_test, _, _ = trained(device, True)
        blind, _, _, _ = trained(device, False)
    assert_the_pages_claims(model, blind, x_test)


@pytest.mark.parametrize("seed", [7])
def test_the_pages_claims_hold_for_other_seeds_too(seed):
    # another initialisation and other batches: the claims do not hang on one lucky run
    model, x_test, _, _ = trained("cpu", True, seed=seed, data_seed=seed)
    blind, _, _, _ = trained("cpu", False, seed=seed, data_seed=seed)
    assert_the_pages_claims(model, blind, x_test)
    assert margin(evaluate(model, x_test)[1]) > 0.2


@pytest.fixture(scope="module", autouse=True)
def on_the_default_code_path():
    """The chapter's script run alone with one thread on the default CPU code path (no AVX).

    Started with this module's first test, it runs in a process of its own beside the module's
    other tests (it trains both models again, the longest run here); stopped when the module
    ends, if it still runs.
    """
    env = {
        **os.environ,
        "ATEN_CPU_CAPABILITY": "default",
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": str(ROOT),
    }
    script = ROOT / "snippets" / "learned_attention" / "reversal.py"
    process = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    yield process
    if process.poll() is None:
        process.kill()
    process.communicate()


def test_one_thread_and_the_default_cpu_code_path_print_the_same(chapter, on_the_default_code_path):
    printed, errors = on_the_default_code_path.communicate()
    assert on_the_default_code_path.returncode == 0, errors
    # the page's widest fence: each number within 5 % (counts and text exactly)
    assert numbers_agree(chapter["printed"], printed, tolerance=0.05)


# --- 7.5 without positions ------------------------------------------------------------------


def test_without_positions_accuracy_stays_near_chance_one_in_seven(chapter):
    accuracy, _ = evaluate(chapter["blind"], chapter["x_test"])
    assert abs(accuracy - 1 / 7) < 0.03
    assert all(accuracy < 0.2 for _, accuracy, _ in chapter["blind_log"])
    # the page: about one token in seven, a little above 1/7 on the 1000 test sequences, about
    # 1/7 on 50,000 fresh ones; its attention does not single out the right key
    assert weight_on_right_keys(chapter["blind_weights"]).mean() < 0.2
    assert 1 / 7 < accuracy < 1 / 7 + 0.015
    fresh, _ = evaluate(chapter["blind"], chapter["x_fresh"])
    assert chapter["x_fresh"].shape == (50_000, L) and abs(fresh - 1 / 7) < 0.005


def test_a_guess_from_what_a_blind_model_sees_is_right_one_time_in_seven():
    # a blind model sees its own token and the set of tokens: guess, say, the smallest other
    # one. The answer is any of the 7 others with equal chance: right 1/7 of the time on average
    x = make_batch(50_000, torch.Generator().manual_seed(5), device="cpu")
    smallest_two = x.sort(dim=-1).values[:, :2]
    own = x[:, 0]
    guess = torch.where(own == smallest_two[:, 0], smallest_two[:, 1], smallest_two[:, 0])
    assert abs(float((guess == reverse(x)[:, 0]).double().mean()) - 1 / 7) < 0.005


def test_without_positions_the_test_loss_stays_above_ln_7(chapter):
    x_test = chapter["x_test"]
    with torch.no_grad():
        logits, _ = chapter["blind"](x_test)
    loss = F.cross_entropy(logits.flatten(0, 1), reverse(x_test).flatten())
    # ln 7 bounds the expected loss; 8000 predictions estimate it
    assert loss > math.log(7) - 0.02
    # and each batch of 512 stays near or above it
    assert min(chapter["blind_losses"]) > math.log(7) - 0.15


def test_without_positions_a_token_gives_itself_the_least_weight(chapter):
    weights = chapter["blind_weights"]
    diagonal = weights.diagonal(dim1=-2, dim2=-1)
    off_diagonal = (weights.sum(dim=-1) - diagonal) / (L - 1)
    assert diagonal.mean() < 0.8 * off_diagonal.mean()
    # figure learned-positions-alone, left: the first test sequence, spread over the keys
    # (no cell above 20 %), its diagonal lighter
    assert float(weights[0].max()) < 0.2
    assert diagonal[0].mean() < 0.8 * off_diagonal[0].mean()


def test_rolling_the_input_changes_every_right_answer_but_no_logit(chapter):
    assert chapter["same"]
    x, rolled = chapter["x"], chapter["rolled"]
    assert bool((reverse(x) != reverse(rolled).roll(-1, dims=-1)).all())


def test_an_odd_length_makes_each_of_the_9_tokens_the_answer_with_probability_one_in_nine(
    monkeypatch,
):
    # exercise 2: a token that cannot see positions. Its position p is one of 9, equally likely;
    # another token u holds one of the 8 other positions q, equally likely: 72 cases (p, q), u is
    # the answer when q = 8 - p
    n = 9
    p, q = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    cases = p != q
    p_itself = (torch.arange(n) == n - 1 - torch.arange(n)).double().mean()
    p_each_other = ((q == n - 1 - p) & cases).sum().double() / cases.sum()  # 8/9 * 1/8, not 1/72
    assert_close(p_itself, torch.tensor(1 / 9, dtype=torch.float64))
    assert_close(p_each_other, torch.tensor(1 / 9, dtype=torch.float64))
    assert_close(p_itself + (n - 1) * p_each_other, torch.tensor(1.0, dtype=torch.float64))
    # the same in the chapter's data: how often token 1 is token 0's answer when both are in a
    # sequence
    monkeypatch.setattr(reversal, "L", n)
    x = make_batch(20000, torch.Generator().manual_seed(0), device="cpu")
    y = reverse(x)
    both = (x == 0).any(dim=-1) & (x == 1).any(dim=-1)
    x, y = x[both], y[both]
    answer_of_0 = y[x == 0]  # one per sequence: the token at the mirrored position
    share = (answer_of_0 == 1).double().mean()
    assert_close(share, torch.tensor(1 / 9, dtype=torch.float64), atol=0.02, rtol=0)


def test_an_odd_length_caps_accuracy_without_positions_at_one_in_nine(monkeypatch):
    # exercise 2: with L = 9 the middle token is its own answer, and all 9 tokens are equally
    # likely
    monkeypatch.setattr(reversal, "L", 9)
    x_test = make_batch(1000, torch.Generator().manual_seed(1), device="cpu")
    torch.manual_seed(1)
    blind = Reverser(positions=False)
    train(blind, x_test)
    accuracy, _ = evaluate(blind, x_test)
    assert x_test.shape == (1000, 9) and abs(accuracy - 1 / 9) < 0.03


# --- 7.6 where the pattern lives ----------------------------------------------------------


def test_the_score_is_the_sum_of_the_four_token_and_position_terms(chapter):
    model, tokens = chapter["model"], chapter["x_test"][:5]
    w_q, w_k, _ = model.mha.in_proj_weight.chunk(3)
    T, P = model.tok(tokens), model.pos.weight
    with torch.no_grad():
        full = ((T + P) @ w_q.T) @ ((T + P) @ w_k.T).transpose(-2, -1)
        parts = sum((a @ w_q.T) @ (b @ w_k.T).transpose(-2, -1) for a in (P, T) for b in (P, T))
    assert_close(parts, full, atol=1e-3, rtol=1e-4)


def test_the_position_table_alone_gives_the_anti_diagonal(chapter):
    positions_only = chapter["positions_only"]
    assert positions_only.argmax(dim=-1).tolist() == RIGHT.tolist()
    # figure learned-positions-alone, right: close to 100 % on the anti-diagonal
    assert bool((weight_on_right_keys(positions_only[None]) > 0.99).all())


def test_no_bias_that_depends_only_on_distance_has_the_anti_diagonal_as_its_argmax():
    # section 7.6: row 3 needs key 4 (distance i - j = -1), row 4 needs key 3 (distance +1), so a
    # bias b(i - j) would need b(-1) > b(+1) and b(+1) > b(-1) at once; random biases never manage
    # it
    g = torch.Generator().manual_seed(0)
    i, j = torch.arange(L)[:, None], torch.arange(L)
    for _ in range(200):
        b = torch.randn(2 * L - 1, generator=g)  # b[d + L - 1] is the bias at distance d = i - j
        bias = b[i - j + L - 1]
        assert not torch.equal(bias.argmax(dim=-1), RIGHT)
        row_3_wants, row_4_wants = b[-1 + L - 1] > b[1 + L - 1], b[1 + L - 1] > b[-1 + L - 1]
        assert not (row_3_wants and row_4_wants)


# --- exercises -------------------------------------------------------------------------------


def test_copying_is_learned_without_positions(exercises):
    accuracy, _ = evaluate(exercises["copier"], exercises["x_test"], target=exercises["copy"])
    assert accuracy > 0.9
    assert exercises["copier"].pos is None


def test_sinusoidal_positions_reverse_too_with_less_concentrated_weights(exercises):
    fixed, x_test = exercises["fixed"], exercises["x_test"]
    assert not fixed.pos.weight.requires_grad  # frozen
    accuracy, weights = evaluate(fixed, x_test)
    assert accuracy > 0.99
    assert bool((weights.argmax(dim=-1) == RIGHT.to(weights.device)).all())
    assert 0.5 < weight_on_right_keys(weights).mean() < 0.85


def test_the_exercises_claims_hold_for_another_seed_too(exercises):
    x_test, copy, seed = exercises["x_test"], exercises["copy"], 7
    torch.manual_seed(seed)
    copier = Reverser(positions=False).to(x_test.device)
    train(copier, x_test, target=copy, seed=seed)
    assert evaluate(copier, x_test, target=copy)[0] > 0.9
    torch.manual_seed(seed)
    fixed = Reverser().to(x_test.device)
    fixed.pos = nn.Embedding.from_pretrained(exercises["sinusoidal_encoding"](L, 32))
    train(fixed, x_test, seed=seed)
    accuracy, weights = evaluate(fixed, x_test)
    assert accuracy > 0.99 and weight_on_right_keys(weights).mean() < 0.9
    assert bool((weights.argmax(dim=-1) == RIGHT.to(weights.device)).all())


def test_the_exercise_encoding_is_chapter_6s(exercises):
    ours = exercises["sinusoidal_encoding"](L, 32).cpu()
    assert_close(ours, sinusoidal_encoding(L, 32), atol=1e-6, rtol=0)


def test_reversal_is_a_fixed_linear_map_of_the_sinusoidal_encoding(device):
    # exercise 5: PE(L-1-i) = M_{L-1} R PE(i), R flipping the sign of every sine component
    d_model = 32
    pe = sinusoidal_encoding(L, d_model, device=device)
    R = torch.diag(torch.tensor([-1.0, 1.0] * (d_model // 2))).to(device)
    M = shift_matrix(L - 1, d_model, device=device)
    assert_close(pe @ (M @ R).T, pe.flip(0), atol=2e-5, rtol=0)
    scores = pe @ (M @ R).T @ pe.T  # W^Q W^K^T = (M R)^T
    assert scores.argmax(dim=-1).tolist() == RIGHT.tolist()
