"""FAQ (docs/faq.{zh,en}.md): page structure, and every claim its code blocks make, checked against
PyTorch."""

import functools
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import markdown
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.functional import jacobian
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.testing import assert_close
from torch.utils.flop_counter import FlopCounterMode, flop_registry

from tests.conftest import run_snippet

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets" / "faq"
# the FAQ: faq.md lists the 20 questions, then a page per group of five
GROUPS = ["faq-concepts", "faq-matrices", "faq-heads", "faq-engineering"]


def page_text(name, lang="zh"):
    return (DOCS / f"{name}.{lang}.md").read_text(encoding="utf-8")


def faq_text(lang="zh"):
    """Every FAQ page, the list first, then the groups in order."""
    return "\n".join(page_text(name, lang) for name in ["faq", *GROUPS])


@functools.cache
def script(name):
    """Variables of snippets/faq/<name>.py after it ran as a script (run once per session)."""
    return run_snippet(f"faq/{name}.py")


def printed(name):
    buffer = io.StringIO()
    run_snippet(f"faq/{name}.py", stdout=buffer)
    return buffer.getvalue()


# --- the page --------------------------------------------------------------

# a question with a formula in its title also gives its TOC label: { #q8 data-toc-label="Q8. ..." }
# (test_math.py)
QUESTION = re.compile(r'^## Q(\d+)\. \S.* \{ ?#q(\d+)(?: data-toc-label="[^"]+")? ?\}$')


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_group_page_has_its_five_questions_with_anchors_and_the_list_links_each_one(lang):
    listed = re.findall(r"^- \[Q(\d+)\. .*\]\(([\w-]+)\.md#q(\d+)\)$", page_text("faq", lang), re.M)
    assert [(int(n), page, int(anchor)) for n, page, anchor in listed] == [
        (n, GROUPS[(n - 1) // 5], n) for n in range(1, 21)
    ]
    for group, name in enumerate(GROUPS):
        numbers = []
        for line in page_text(name, lang).splitlines():
            if line.startswith("## ") and line[3:] not in {"小结", "Summary"}:
                match = QUESTION.match(line)
                assert match, (
                    f"{name}.{lang}.md: heading without the form '## Qn. ... {{#qn}}': {line}"
                )
                assert match[1] == match[2], line
                numbers.append(int(match[1]))
        assert numbers == list(range(5 * group + 1, 5 * group + 6)), name


def test_question_anchors_render_as_q1_to_q20_in_order():
    ids = []
    for name in GROUPS:
        html = markdown.markdown(page_text(name), extensions=["attr_list", "toc"])
        ids += re.findall(r'<h2 id="(q\d+)"', html)
    assert ids == [f"q{n}" for n in range(1, 21)]


@pytest.mark.parametrize(
    "lang, abstract, summary, references",
    [
        ("zh", "读完这四组问答，你可以", "小结", "参考资料与延伸阅读"),
        ("en", "After these four groups you can", "Summary", "References and further reading"),
    ],
)
def test_page_starts_with_abstract_and_ends_with_summary_then_references(
    lang, abstract, summary, references
):
    text = page_text("faq", lang)
    assert f'!!! abstract "{abstract}"' in text
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[-2:] == [summary, references]


def test_every_faq_snippet_and_figure_is_used_on_the_faq_pages():
    text = faq_text()
    for path in sorted(SNIPPETS.glob("q*.py")):
        assert f'"snippets/faq/{path.name}:' in text, f"{path.name} is not shown on the page"
    for name in [
        "faq-scaling-variance",
        "faq-heads-table3",
        "faq-attention-cost",
        "faq-score-memory",
    ]:
        assert f"](figures/{name}.svg)" in text


# --- Q1-Q5: concepts -------------------------------------------------------


def test_q1_output_is_a_weighted_average_of_v_with_v_width_not_x_width():
    ns = script("q01_weighted_average")
    A, V, out, X = ns["A"], ns["V"], ns["out"], ns["X"]
    assert bool((A >= 0).all())
    assert_close(A.sum(-1), torch.ones(A.shape[0], device=A.device))
    assert_close(out, F.scaled_dot_product_attention(ns["Q"], ns["K"], V))
    assert out.shape == (X.shape[0], V.shape[1]) != X.shape


def test_q2_cross_attention_takes_keys_and_values_from_the_encoder(device, dtype):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).to(device, dtype)
    enc = torch.randn(2, 7, 16, dtype=dtype).to(device)
    dec = torch.randn(2, 3, 16, dtype=dtype).to(device)
    out, weights = mha(dec, enc, enc)
    assert out.shape == (2, 3, 16) and weights.shape == (2, 3, 7)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)

    def heads(t):
        return t.view(2, -1, 4, 4).transpose(1, 2)

    q, k, v = (
        heads(F.linear(dec, w_q, b_q)),
        heads(F.linear(enc, w_k, b_k)),
        heads(F.linear(enc, w_v, b_v)),
    )
    by_hand = mha.out_proj(
        F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(2, 3, 16)
    )
    assert_close(out, by_hand)


def test_q2_keys_and_values_need_equal_rows_in_the_same_order_not_the_same_sequence(device, dtype):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(3, 4, generator=g, dtype=dtype).to(device)
    k = torch.randn(7, 4, generator=g, dtype=dtype).to(device)
    # unrelated to k: only the rows match
    v = torch.randn(7, 5, generator=g, dtype=dtype).to(device)
    out = F.scaled_dot_product_attention(q, k, v)
    assert_close(out, torch.softmax(q @ k.T / 2, dim=-1) @ v)
    # row j of V is paired with key j: moving both rows together changes nothing, moving V alone
    # does
    shuffle = torch.randperm(7, generator=g).to(device)
    assert_close(F.scaled_dot_product_attention(q, k[shuffle], v[shuffle]), out)
    assert not torch.allclose(F.scaled_dot_product_attention(q, k, v[shuffle]), out, atol=1e-3)
    with pytest.raises(RuntimeError):  # a value for every key: 7 keys, 6 values
        torch.softmax(q @ k.T / 2, dim=-1) @ v[:6]


def test_q2_script_shows_the_row_alignment():
    out = printed("q02_key_value_rows")
    assert "K (7, 4) and V (7, 5) -> output (3, 5)" in out
    assert "shuffled together, same output: True" in out
    assert "shuffled alone, same output:          False" in out


def test_q3_linear_jacobian_is_its_fixed_weight_and_attention_jacobian_depends_on_the_input(
    device, dtype
):
    torch.manual_seed(0)
    d = 8
    linear = nn.Linear(d, d).to(device, dtype)
    W_Q, W_K, W_V = (torch.randn(3, d, d, dtype=dtype) / d**0.5).to(device)

    def attention(X):
        return F.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)

    X1 = torch.randn(5, d, dtype=dtype).to(device)
    X2 = X1.clone()
    X2[4] = torch.randn(d, dtype=dtype).to(device)
    J_lin1, J_lin2 = jacobian(linear, X1), jacobian(linear, X2)
    J_att1, J_att2 = jacobian(attention, X1), jacobian(attention, X2)
    # Linear: the same matrix W for every input, and output row i responds to input row i only
    eye = torch.eye(5, dtype=dtype, device=device)
    assert_close(J_lin1, J_lin2)
    assert_close(J_lin1, torch.einsum("ij,ab->iajb", eye, linear.weight.detach()))
    # attention: the matrix depends on the input, and output row 0 responds to input row 4
    assert not torch.allclose(J_att1, J_att2, atol=1e-3)
    assert J_att1[0, :, 4].abs().max() > 1e-2


def test_q3_script_shows_what_the_jacobians_prove():
    ns = script("q03_dynamic_weights")
    assert_close(ns["J_lin1"], ns["J_lin2"])
    assert torch.equal(ns["J_lin1"][0, :, 4], torch.zeros_like(ns["J_lin1"][0, :, 4]))
    assert not torch.allclose(ns["J_att1"], ns["J_att2"], atol=1e-3)
    assert ns["J_att1"][0, :, 4].abs().max() > 1e-2
    assert not torch.allclose(ns["A1"], ns["A2"])
    out = printed("q03_dynamic_weights")
    assert "Linear     same for X1, X2: True   row 0 sees row 4: False" in out
    assert "attention  same for X1, X2: False  row 0 sees row 4: True" in out


def test_q4_contribution_is_weight_times_value_not_weight_alone():
    ns = script("q04_weight_vs_contribution")
    weights, V, parts = ns["weights"], ns["V"], ns["parts"]
    assert weights[0] > weights[1]
    assert parts[0].norm() < parts[1].norm()
    assert_close(parts.sum(0), weights @ V)


def test_q5_one_head_is_n_by_d_v_and_w_o_brings_back_x_shape():
    ns = script("q05_output_shape")
    X, heads, out, mha = ns["X"], ns["heads"], ns["out"], ns["mha"]
    assert heads[:, 0].shape == (1, 5, ns["d_v"]) != X.shape
    assert out.shape == X.shape
    with torch.no_grad():
        assert_close(out, mha(X, X, X)[0])


# --- Q6-Q10: matrices and formulas ----------------------------------------


def test_q6_without_the_transpose_a_square_k_runs_silently_and_gives_wrong_scores(device, dtype):
    torch.manual_seed(0)
    L = d_k = 4
    Q, K = torch.randn(2, L, d_k, dtype=dtype).to(device)
    wrong, right = Q @ K, Q @ K.mT  # L == d_k: no error
    assert wrong.shape == right.shape == (L, L)
    assert_close(right, torch.einsum("ic,jc->ij", Q, K))  # query i · key j
    assert not torch.allclose(wrong, right, atol=1e-3)
    with pytest.raises(RuntimeError):  # L != d_k: the same mistake is an error
        torch.randn(5, 4, dtype=dtype, device=device) @ torch.randn(
            5, 4, dtype=dtype, device=device
        )


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_q6_page_shows_the_square_case_after_the_error(lang):
    text = page_text("faq-matrices", lang)
    q6 = text[text.index("{ #q6 ") : text.index("{ #q7 ")]
    error, square = q6.index("transpose_k.py:error"), q6.index("transpose_k.py:square")
    assert error < square
    assert "largest |wrong - q_i · k_j|: 4.4247" in q6[square:]  # not dot products at all


def test_q6_k_dot_t_on_more_than_two_dimensions_warns_that_it_is_deprecated():
    # PyTorch warns once per process; warn_always makes it warn here even if an earlier test used
    # K.T
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        with pytest.warns(
            UserWarning, match=r"`x\.T` on tensors of dimension other than 2 .* is deprecated"
        ):
            _ = torch.zeros(2, 3, 4).T
    finally:
        torch.set_warn_always(previous)


def test_q7_eight_heads_of_64_cost_the_same_flops_as_one_head_of_512():
    ns = script("q07_head_width_cost")
    flops, L, d_model = ns["flops"], ns["L"], ns["d_model"]
    assert flops[1, 512] == flops[8, 64]
    for (H, d_k), counted in flops.items():
        assert counted == 8 * L * d_model * H * d_k + 4 * L * L * H * d_k
    assert flops[8, 16] < flops[8, 64]


def test_q7_value_width_may_differ_from_key_width(device, dtype):
    torch.manual_seed(0)
    q, k = torch.randn(2, 1, 8, 5, 16, dtype=dtype).to(device)
    v = torch.randn(1, 8, 5, 40, dtype=dtype).to(device)
    by_hand = torch.softmax(q @ k.transpose(-2, -1) / 16**0.5, dim=-1) @ v
    assert_close(F.scaled_dot_product_attention(q, k, v), by_hand)


def test_q8_without_scaling_softmax_saturates_and_dividing_by_d_k_flattens_it():
    ns = script("q08_scaling_variance")
    peak, uniform = ns["peak"], 1 / ns["n_keys"]
    assert peak["none"] == sorted(peak["none"]) and peak["none"][-1] > 0.9
    assert max(peak["sqrt"]) - min(peak["sqrt"]) < 0.02
    assert peak["d_k"] == sorted(peak["d_k"], reverse=True) and peak["d_k"][-1] < 1.1 * uniform
    # the first two columns are chapter 3's measurements, shown on the page right above
    assert peak["none"] is ns["max_weight"]["raw"] and peak["sqrt"] is ns["max_weight"]["scaled"]


def test_q9_scale_folded_into_w_q_gives_the_same_attention(device, dtype):
    torch.manual_seed(0)
    x = torch.randn(6, 16, dtype=dtype).to(device)
    W_Q, W_K, W_V = (torch.randn(3, 16, 16, dtype=dtype) / 4).to(device)
    d_k = 16
    scaled = F.scaled_dot_product_attention(x @ W_Q, x @ W_K, x @ W_V)
    folded = F.scaled_dot_product_attention(x @ (W_Q / d_k**0.5), x @ W_K, x @ W_V, scale=1.0)
    assert_close(scaled, folded)


def test_q9_footnote_variance_holds_only_under_its_assumptions():
    ns = script("q09_footnote_assumptions")
    d_k, q, k = ns["d_k"], ns["q"], ns["k"]
    assert (q * k).sum(-1).var().item() == pytest.approx(d_k, rel=0.05)
    assert ((0.5 * q) * (0.5 * k)).sum(-1).var().item() == pytest.approx(d_k / 16, rel=0.05)
    assert (q * q).sum(-1).mean().item() == pytest.approx(d_k, rel=0.05)
    assert_close(ns["with_scale"], ns["folded"])


def test_q9_folding_the_scale_into_w_q_is_equivalent_only_until_the_first_training_step(
    device, dtype
):
    torch.manual_seed(0)
    n, d_model, d_k = 6, 32, 16
    X = torch.randn(n, d_model, dtype=dtype).to(device)
    W_Q, W_K, W_V = (torch.randn(3, d_model, d_k, dtype=dtype) / d_model**0.5).to(device)
    K, V = X @ W_K, X @ W_V
    target = torch.randn(n, d_k, dtype=dtype).to(device)
    scale = d_k**0.5
    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == torch.float32 else {}

    def scores(W, divide_by):
        return (X @ W) @ K.T / divide_by

    def one_step(W0, divide_by, optimizer, lr):
        W = W0.clone().requires_grad_()
        ((torch.softmax(scores(W, divide_by), dim=-1) @ V - target) ** 2).mean().backward()
        optimizer([W], lr=lr).step()
        return W.grad, scores(W.detach(), divide_by)

    before = scores(W_Q, scale)
    assert_close(scores(W_Q / scale, 1.0), before)  # the same model at initialisation
    grad_s, after_s = one_step(W_Q, scale, torch.optim.SGD, 0.1)
    grad_f, after_f = one_step(W_Q / scale, 1.0, torch.optim.SGD, 0.1)
    assert_close(grad_f, scale * grad_s)  # the gradients differ by √d_k
    # SGD: the scores move d_k times as far
    assert_close(after_f - before, d_k * (after_s - before), **tol)
    assert not torch.allclose(after_f, after_s, atol=1e-3)
    # Adam's first step moves each weight by about lr whatever the gradient's size: only the √d_k
    # remains
    _, after_s = one_step(W_Q, scale, torch.optim.Adam, 0.01)
    _, after_f = one_step(W_Q / scale, 1.0, torch.optim.Adam, 0.01)
    assert_close(after_f - before, scale * (after_s - before), atol=1e-3, rtol=1e-3)
    assert not torch.allclose(after_f, after_s, atol=1e-3)


def test_q9_script_prints_the_ratios_of_one_step():
    out = printed("q09_footnote_assumptions")
    assert "before the step, same scores: True" in out
    assert "SGD                             4.00         16.00  False" in out
    assert "Adam                            4.00          4.00  False" in out


def test_q10_masked_fill_minus_1e9_overflows_float16(device):
    scores = torch.zeros(2, 2, dtype=torch.float16, device=device)
    mask = torch.tensor([[False, True], [False, False]], device=device)
    with pytest.raises(RuntimeError, match="overflow"):
        scores.masked_fill(mask, -1e9)
    assert scores.masked_fill(mask, float("-inf"))[0, 1].item() == float("-inf")
    assert scores.masked_fill(mask, torch.finfo(torch.float16).min)[0, 1].item() == -65504.0


def test_q10_sdpa_true_means_attend_and_mha_true_means_blocked(device, dtype):
    torch.manual_seed(0)
    L, E = 5, 8
    x = torch.randn(1, L, E, dtype=dtype).to(device)
    keep = torch.ones(L, L, dtype=torch.bool, device=device).tril()
    # sdpa: True = attend; the same as is_causal=True
    assert_close(
        F.scaled_dot_product_attention(x, x, x, attn_mask=keep),
        F.scaled_dot_product_attention(x, x, x, is_causal=True),
    )
    # nn.MultiheadAttention: True = blocked; ~keep gives the causal weights
    mha = nn.MultiheadAttention(E, 2, batch_first=True).to(device, dtype)
    _, weights = mha(x, x, x, attn_mask=~keep)
    assert bool((weights[0][~keep] == 0).all()) and bool((weights[0][keep] > 0).all())
    _, wrong = mha(x, x, x, attn_mask=keep)
    assert bool(wrong[0, -1].isnan().all())  # the last query may see nothing


def test_q10_the_source_articles_0_1_mask_means_what_sdpas_true_means(device, dtype):
    # The page used to call the article's mask (1 = keep, masked_fill(mask == 0, -1e9)) "a third
    # convention"
    torch.manual_seed(0)
    L, d = 5, 8
    q, k, v = (torch.randn(1, L, d, dtype=dtype).to(device) for _ in range(3))
    mask = torch.ones(L, L, dtype=torch.long, device=device).tril()  # the article's: 1 = keep
    scores = (q @ k.mT / d**0.5).masked_fill(mask == 0, -1e9)
    article = torch.softmax(scores, dim=-1) @ v
    assert_close(article, F.scaled_dot_product_attention(q, k, v, attn_mask=mask.bool()))
    mha = nn.MultiheadAttention(d, 1, batch_first=True, bias=False).to(device, dtype)
    # nn.MultiheadAttention reads the same tensor the other way
    _, weights = mha(q, q, q, attn_mask=mask.bool())
    seen, keep = weights[0, :-1], mask[:-1] == 1
    assert (
        bool((seen[keep] == 0).all())
        and bool((seen[~keep] > 0).all())
        and bool(weights[0, -1].isnan().all())
    )


def test_q10_script_shows_the_two_conventions():
    out = printed("q10_masking")
    assert "sdpa, mask=keep : 1 0 0 0 | 1 1 0 0 | 1 1 1 0 | 1 1 1 1   NaN rows: []" in out
    assert "MHA,  mask=~keep: 1 0 0 0 | 1 1 0 0 | 1 1 1 0 | 1 1 1 1   NaN rows: []" in out
    assert "MHA,  mask=keep : 0 1 1 1 | 0 0 1 1 | 0 0 0 1 | 0 0 0 0   NaN rows: [3]" in out


def test_q10_sdpa_on_cpu_returns_zeros_for_a_fully_masked_row():
    # An observation about torch 2.13 on CPU, stated as such on the page; other backends may
    # differ.
    torch.manual_seed(0)
    q = torch.randn(1, 3, 4)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert torch.equal(out[0, 1], torch.zeros(4))


# --- Q11-Q15: heads and parameters ----------------------------------------


def test_q11_more_heads_more_maps_same_parameters():
    ns = script("q11_head_patterns")
    assert ns["maps"].shape == (1, 8, 6, 6)
    counts = {
        h: sum(p.numel() for p in nn.MultiheadAttention(64, h).parameters())
        for h in [1, 2, 4, 8, 16]
    }
    assert len(set(counts.values())) == 1


def test_q12_table3_rows_a_have_constant_width_and_attention_parameters():
    ns = script("q12_heads_table3")
    table = ns["TABLE3"]
    assert [r[1] for r in table if r[0] == "base"] == [8]
    sizes = set()
    for _, h, d_k, d_v, _, _ in table:
        assert h * d_k == h * d_v == 512
        sizes.add(sum(p.numel() for p in nn.MultiheadAttention(512, h).parameters()))
    assert len(sizes) == 1


def test_q12_page_claims_follow_from_the_table():
    bleu = {h: b for _, h, _, _, _, b in script("q12_heads_table3")["TABLE3"]}
    ppl = {h: p for _, h, _, _, p, _ in script("q12_heads_table3")["TABLE3"]}
    assert bleu[16] == bleu[8] and ppl[16] < ppl[8]  # d_k = 32 matches the base model
    assert round(bleu[8] - bleu[1], 1) == 0.9  # one head is worst
    assert round(bleu[8] - bleu[32], 1) == 0.4  # d_k = 16 loses a little
    assert min(bleu, key=bleu.get) == 1


def test_q15_packed_in_proj_weight_holds_three_separate_projections(device, dtype):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).to(device, dtype)
    x = torch.randn(1, 3, 16, dtype=dtype).to(device)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    assert not torch.equal(w_q, w_k) and not torch.equal(w_k, w_v)
    packed = F.linear(x, mha.in_proj_weight, mha.in_proj_bias)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)
    assert_close(
        packed, torch.cat([F.linear(x, W, b) for W, b in [(w_q, b_q), (w_k, b_k), (w_v, b_v)]], -1)
    )


@pytest.mark.parametrize("groups", [1, 2, 4, 8], ids=lambda g: f"G={g}")
def test_q15_enable_gqa_equals_repeating_each_kv_head(groups, device, dtype):
    torch.manual_seed(0)
    H, L, d = 8, 6, 16
    q = torch.randn(2, H, L, d, dtype=dtype).to(device)
    k, v = torch.randn(2, 2, groups, L, d, dtype=dtype).to(device)
    expected = F.scaled_dot_product_attention(
        q, k.repeat_interleave(H // groups, dim=1), v.repeat_interleave(H // groups, dim=1)
    )
    assert_close(F.scaled_dot_product_attention(q, k, v, enable_gqa=True), expected)
    # query head i uses key/value head i // (H / G)
    i = H - 1
    j = i // (H // groups)
    assert_close(expected[:, i], F.scaled_dot_product_attention(q[:, i], k[:, j], v[:, j]))


# --- Q16-Q20: engineering --------------------------------------------------


def test_q17_profiler_shows_which_operator_ran():
    ns = script("q17_which_kernel")
    native, sdpa = ns["NATIVE"], ns["SDPA"]
    (a, b, c) = ns["cases"].values()
    assert native not in a and sdpa not in a
    assert native not in b and sdpa in b
    assert native in c and sdpa not in c


def test_q17_fast_path_needs_eval_and_no_grad_and_all_paths_agree():
    ns = script("q17_which_kernel")
    ops_in_trace, native = ns["ops_in_trace"], ns["NATIVE"]
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(64, 8, batch_first=True)
    x = torch.randn(2, 10, 64)
    mha.eval()
    assert native not in ops_in_trace(lambda: mha(x, x, x))  # eval, but autograd on
    with torch.no_grad():
        assert native in ops_in_trace(lambda: mha(x, x, x))
        assert native not in ops_in_trace(lambda: mha(x, x.clone(), x))  # key is not query
        # CPU, torch 2.13: the fused op does not call SDPA even with need_weights=False
        assert ns["SDPA"] not in ops_in_trace(lambda: mha(x, x, x, need_weights=False))
        fast = mha(x, x, x)[0]
    mha.train()
    assert_close(fast, mha(x, x, x)[0])
    assert_close(fast, mha(x, x, x, need_weights=False)[0])


def test_q17_fast_path_is_not_taken_without_batch_first():
    ns = script("q17_which_kernel")
    mha = nn.MultiheadAttention(64, 8).eval()
    x = torch.randn(10, 2, 64)
    with torch.no_grad():
        assert ns["NATIVE"] not in ns["ops_in_trace"](lambda: mha(x, x, x))


@pytest.mark.skipif(
    not torch.__version__.startswith("2.13."), reason="the pages say this of torch 2.13"
)
def test_q17_and_chapter_9_torch_2_13s_profiler_logs_a_start_and_a_stop_line_to_stderr():
    code = (
        "from torch.profiler import ProfilerActivity, profile\n"
        "with profile(activities=[ProfilerActivity.CPU]):\n    pass"
    )
    env = {name: value for name, value in os.environ.items() if name != "KINETO_LOG_LEVEL"}
    ran = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert ran.stdout == ""
    logged = [line for line in ran.stderr.splitlines() if line.startswith("USDT:")]
    assert [line.rsplit("] ", 1)[-1] for line in logged] == ["profiler_start", "profiler_stop"]
    for page in ["faq-engineering", "fast-attention"]:
        for lang in ["zh", "en"]:
            text = page_text(page, lang)
            assert "torch 2.13" in text and "`USDT: … profiler_start`" in text, (page, lang)
            assert "`USDT: … profiler_stop`" in text, (page, lang)


def test_q18_flop_count_is_8_l_d2_plus_4_l2_d():
    ns = script("q18_quadratic_cost")
    d = ns["d"]
    for L, counted in zip(ns["lengths"], ns["flops"], strict=True):
        assert counted == 8 * L * d * d + 4 * L * L * d


def test_q18_flop_counter_counts_the_operators_with_a_formula_not_only_matrix_products():
    torch.manual_seed(0)
    L, d = 64, 16
    scores = torch.randn(L, L)
    with FlopCounterMode(display=False) as counter:
        torch.softmax(scores.masked_fill(scores > 1, float("-inf")) / d**0.5, dim=-1)
    assert counter.get_total_flops() == 0  # softmax, scaling and masking have no formula
    with FlopCounterMode(display=False) as counter:
        torch.randn(L, d) @ torch.randn(d, L)
    assert counter.get_total_flops() == 2 * L * d * L
    # the page used to say it counts matrix multiplications only: convolutions count too
    x, w = torch.randn(1, 3, 10, 10), torch.randn(8, 3, 3, 3)
    with FlopCounterMode(display=False) as counter:
        F.conv2d(x, w)
    # 2 per multiply-add, per output value
    assert counter.get_total_flops() == 2 * (8 * 8 * 8) * (3 * 3 * 3)
    # and so do the fused attention kernels sdpa uses on a GPU
    registered = {str(op) for op in flop_registry}
    fused = ["flash_attention", "efficient_attention", "cudnn_attention"]
    assert all(f"aten._scaled_dot_product_{name}" in registered for name in fused)
    # sdpa's fused CPU kernel has none: it counts 0, where the math backend counts its two matrix
    # products
    q = torch.randn(1, 2, L, d)
    with FlopCounterMode(display=False) as counter:
        F.scaled_dot_product_attention(q, q, q)
    assert counter.get_total_flops() == 0
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        F.scaled_dot_product_attention(q, q, q)
    assert counter.get_total_flops() == 2 * 2 * (2 * L * d * L)


@pytest.mark.parametrize("h", [1, 4, 8])
def test_q18_a_layer_of_h_heads_costs_the_formula_with_d_model_not_the_head_width(h):
    torch.manual_seed(0)
    L, d_model = 32, 64
    d_k = d_model // h
    mha = nn.MultiheadAttention(d_model, h, batch_first=True)
    x = torch.randn(1, L, d_model)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        mha(x, x, x)
    assert counter.get_total_flops() == 8 * L * d_model**2 + 4 * L**2 * d_model
    # h heads: h times one head's quadratic part; the projections do not depend on h
    assert 4 * L**2 * d_model == h * 4 * L**2 * d_k
    if h > 1:
        assert counter.get_total_flops() > 8 * L * d_k**2 + 4 * L**2 * d_k


def test_q18_script_counts_pytorchs_eight_head_layer():
    mha = script("q18_quadratic_cost")["mha"]
    out = printed("q18_quadratic_cost")
    # the timing loop reuses L
    L = int(re.search(r"nn\.MultiheadAttention\(\d+, \d+\), L = (\d+)", out)[1])
    d_model, d_k = mha.embed_dim, mha.head_dim
    counted = 8 * L * d_model**2 + 4 * L**2 * d_model
    assert f"counted FLOPs:                   {counted:,}" in out
    assert f"8·L·d² + 4·L²·d, d = d_k:         {8 * L * d_k**2 + 4 * L**2 * d_k:,}" in out
    assert "softmax and scaling of an (L, L) matrix: 0" in out


def test_q18_fitted_flop_slope_for_large_l_is_near_two():
    ns = script("q18_quadratic_cost")
    slope, self_attention, d = ns["fitted_slope"], ns["self_attention"], ns["d"]
    assert 1.9 < slope(ns["lengths"][-3:], ns["flops"][-3:]) < 2.0  # the page's lengths
    # much longer sequences, counted on the meta device (shapes only, nothing computed)
    W_QKV, W_O = torch.empty(d, 3 * d, device="meta"), torch.empty(d, d, device="meta")
    lengths, flops = [16384, 32768, 65536], []
    for L in lengths:
        with FlopCounterMode(display=False) as counter:
            self_attention(torch.empty(L, d, device="meta"), W_QKV, W_O)
        flops.append(counter.get_total_flops())
    assert 1.99 < slope(lengths, flops) <= 2.0


def test_q18_measured_time_grows_faster_than_linearly():
    # Timing is noisy on a shared 2-core machine: best of several runs, one thread, a loose bound.
    ns = script("q18_quadratic_cost")
    seconds, self_attention = ns["seconds"], ns["self_attention"]
    W_QKV, W_O = ns["W_QKV"].cpu(), ns["W_O"].cpu()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            small = seconds(self_attention, torch.randn(256, 64), W_QKV, W_O, repeat=7)
            large = seconds(self_attention, torch.randn(1024, 64), W_QKV, W_O, repeat=7)
    finally:
        torch.set_num_threads(threads)
    assert large / small > 4 * 1.5  # linear would be 4x, quadratic 16x


def test_fitted_slope_recovers_a_power_law():
    slope = script("q18_quadratic_cost")["fitted_slope"]
    assert slope([1, 2, 4, 8], [3 * x**2 for x in [1, 2, 4, 8]]) == pytest.approx(2.0)


def test_q19_score_matrix_bytes_per_head_and_sample():
    score_matrix_bytes = script("q19_score_memory")["score_matrix_bytes"]
    assert score_matrix_bytes(4096, torch.float32) == 64 * 2**20
    assert score_matrix_bytes(32768, torch.float32) == 4 * 2**30
    assert score_matrix_bytes(4096, torch.float16) == 32 * 2**20
    assert score_matrix_bytes(32768, torch.float16) == 2 * 2**30
    assert score_matrix_bytes(4096, torch.float16, batch=8, heads=16) == 8 * 16 * 32 * 2**20


def test_q19_naive_attention_matches_sdpa(device, dtype):
    naive_attention = script("q19_score_memory")["naive_attention"]
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 4, 7, 16, dtype=dtype).to(device)
    assert_close(naive_attention(q, k, v), F.scaled_dot_product_attention(q, k, v))


def test_q19_naive_peak_holds_a_full_score_matrix_and_sdpa_does_not():
    ns = script("q19_score_memory")
    for naive, sdpa, one in zip(
        ns["naive_peak"], ns["sdpa_peak"], ns["one_score_matrix"], strict=True
    ):
        assert naive >= one
        assert sdpa < naive
    assert ns["sdpa_peak"][-1] < ns["one_score_matrix"][-1] / 2


def test_q19_peak_measurement_sees_a_known_allocation():
    peak_bytes = script("q19_score_memory")["peak_bytes"]
    n = 2**20
    assert (
        4 * n
        <= peak_bytes(lambda: torch.ones(n, device=script("q19_score_memory")["device"]))
        < 5 * n
    )


def test_q20_self_attention_without_positions_is_permutation_equivariant(device, dtype):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).to(device, dtype)
    x = torch.randn(2, 7, 16, dtype=dtype).to(device)
    perm = torch.randperm(7).to(device)
    assert_close(mha(x[:, perm], x[:, perm], x[:, perm])[0], mha(x, x, x)[0][:, perm])


def test_q20_positions_and_causal_masks_break_the_symmetry():
    ns = script("q20_permutation")
    attend, x, shuffled, perm, positions = (
        ns["attend"],
        ns["x"],
        ns["shuffled"],
        ns["perm"],
        ns["positions"],
    )
    assert_close(attend(shuffled), attend(x)[:, perm])
    assert not torch.allclose(attend(shuffled, positions), attend(x, positions)[:, perm], atol=1e-3)
    causal = ns["causal"]
    assert not torch.allclose(
        attend(shuffled, mask=causal), attend(x, mask=causal)[:, perm], atol=1e-3
    )
