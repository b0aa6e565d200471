"""The "where attention sits" page (docs/transformer.{zh,en}.md): snippets/transformer/*, checked
against PyTorch's own modules."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

from tests.conftest import run_snippet


@pytest.fixture(scope="module")
def stack():
    return run_snippet("transformer/stack.py")


@pytest.fixture(scope="module")
def block():
    return run_snippet("transformer/block.py")


# --- the residual connection ---


def test_residual_output_minus_the_sublayers_output_is_the_input(device, dtype):
    torch.manual_seed(0)
    x = torch.randn(4, 8, dtype=dtype).to(device)
    sublayer = nn.Linear(8, 8).to(device, dtype)
    out = x + sublayer(x)
    assert_close(out - sublayer(x), x)


def test_residual_passes_the_gradient_with_weight_one_whatever_the_sublayer(device, dtype):
    torch.manual_seed(0)
    x = torch.randn(4, 8, dtype=dtype).to(device).requires_grad_(True)
    sublayer = nn.Linear(8, 8).to(device, dtype)
    (x + sublayer(x)).sum().backward()
    # d/dx of sum(x + x Wᵀ + b): 1 through the identity, plus each column sum of W
    expected = torch.ones_like(x) + sublayer.weight.sum(dim=0)
    assert_close(x.grad, expected.detach())


def test_residual_snippet_passes_x_through_a_zero_sublayer():
    ns = run_snippet("transformer/residual.py")
    assert torch.equal(ns["out"], ns["x"])
    assert torch.equal(ns["x"].grad, torch.ones_like(ns["x"]))


# --- LayerNorm ---


def test_layer_norm_by_hand_equals_nn_layer_norm(device, dtype):
    ns = run_snippet("transformer/layer_norm.py")
    x = ns["x"].to(device, dtype)
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, unbiased=False, keepdim=True)
    y = (x - mean) / torch.sqrt(var + 1e-5)
    norm = nn.LayerNorm(x.shape[-1]).to(device, dtype)
    assert_close(norm(x), y, atol=1e-5, rtol=1e-5)
    assert_close(F.layer_norm(x, x.shape[-1:]), y, atol=1e-5, rtol=1e-5)


def test_layer_norm_gives_each_token_mean_0_and_variance_1():
    ns = run_snippet("transformer/layer_norm.py")
    y = ns["norm"](ns["x"]).detach()
    assert_close(y.mean(dim=-1), torch.zeros(len(y), device=y.device), atol=1e-6, rtol=0)
    ones = torch.ones(len(y), device=y.device)
    assert_close(y.var(dim=-1, unbiased=False), ones, atol=1e-4, rtol=0)
    # per token, not per feature: the columns are not normalised
    assert not torch.allclose(y.mean(dim=0), torch.zeros(y.shape[1], device=y.device))


def test_layer_norm_scale_and_shift_start_at_one_and_zero():
    """The page: nn.LayerNorm gives the numbers computed by hand, its scale and shift start at 1
    and 0."""
    norm = run_snippet("transformer/layer_norm.py")["norm"]
    assert torch.equal(norm.weight, torch.ones_like(norm.weight))
    assert torch.equal(norm.bias, torch.zeros_like(norm.bias))


# --- the MLP ---


def test_mlp_permuting_the_tokens_permutes_the_outputs(device, dtype):
    ns = run_snippet("transformer/mlp.py")
    mlp = ns["mlp"].to(device, dtype)
    torch.manual_seed(1)
    x = torch.randn(2, 7, 8, dtype=dtype).to(device)
    perm = torch.randperm(7).to(device)
    assert_close(mlp(x[:, perm]), mlp(x)[:, perm])


def test_mlp_output_of_a_token_depends_on_that_token_alone():
    ns = run_snippet("transformer/mlp.py")
    mlp, x = ns["mlp"], ns["x"]
    jacobian = torch.autograd.functional.jacobian(mlp, x)  # (L, d_model, L, d_model)
    L = x.shape[0]
    for i in range(L):
        for j in range(L):
            if i != j:
                assert torch.count_nonzero(jacobian[i, :, j, :]) == 0
    change = ns["change"]
    assert change[:3].eq(0).all() and change[3] > 0


def test_attention_unlike_the_mlp_moves_information_between_tokens():
    ns = run_snippet("transformer/mlp.py")
    torch.manual_seed(0)
    attn = nn.MultiheadAttention(8, 2, batch_first=True).to(ns["x"].device)
    x, x2 = ns["x"][None], ns["x2"][None]
    with torch.no_grad():
        change = (attn(x2, x2, x2)[0] - attn(x, x, x)[0]).abs().amax(dim=-1)[0]
    assert (change[:3] > 0).all()


# --- one block ---


def encoder_layer(ns, norm_first):
    """nn.TransformerEncoderLayer holding the weights of the snippet's block."""
    d_model, H = ns["d_model"], ns["H"]
    layer = nn.TransformerEncoderLayer(
        d_model, H, 4 * d_model, dropout=0.0, batch_first=True, norm_first=norm_first
    ).to(ns["x"].device)
    layer.self_attn.load_state_dict(ns["attn"].state_dict())
    layer.linear1.load_state_dict(ns["mlp"][0].state_dict())
    layer.linear2.load_state_dict(ns["mlp"][2].state_dict())
    layer.norm1.load_state_dict(ns["norm1"].state_dict())
    layer.norm2.load_state_dict(ns["norm2"].state_dict())
    return layer


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_block_by_hand_equals_nn_transformer_encoder_layer(block, train):
    layer = encoder_layer(block, norm_first=False).train(train)
    with torch.no_grad():
        assert_close(block["block"](block["x"]), layer(block["x"]), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_pre_norm_block_equals_nn_transformer_encoder_layer_norm_first(block, train):
    layer = encoder_layer(block, norm_first=True).train(train)
    with torch.no_grad():
        expected = layer(block["x"])
        assert_close(block["pre_norm_block"](block["x"]), expected, atol=1e-5, rtol=1e-5)


def test_post_norm_and_pre_norm_differ(block):
    with torch.no_grad():
        assert not torch.allclose(block["block"](block["x"]), block["pre_norm_block"](block["x"]))


def test_chapter_8_decoder_has_two_pre_norm_blocks_and_a_final_layer_norm():
    """The page: chapter 8's decoder has two pre-norm blocks, and one more LayerNorm after the
    last."""
    from snippets.decoding.tiny_decoder import TinyDecoder

    torch.manual_seed(0)
    model = TinyDecoder(10).eval()
    assert len(model.blocks) == 2 and isinstance(model.ln, nn.LayerNorm)
    x = torch.randn(1, 4, model.tok.embedding_dim)
    allowed = torch.ones(4, 4, dtype=torch.bool).tril()
    block = model.blocks[0]
    with torch.no_grad():
        h = x + block.attn(block.ln1(x), allowed)  # pre-norm: the sublayer reads ln(x)
        assert_close(block(x, allowed), h + block.mlp(block.ln2(h)))


# --- the whole model (the figure's values) ---


def test_every_stage_keeps_b_l_d_model_but_the_first_and_the_last(stack):
    shapes, d_model = stack["shapes"], stack["d_model"]
    B, L_src, L_tgt, vocab = stack["B"], stack["L_src"], stack["L_tgt"], stack["vocab"]
    assert shapes == {
        "source tokens": (B, L_src),
        "encoder input": (B, L_src, d_model),
        "encoder output": (B, L_src, d_model),
        "target tokens": (B, L_tgt),
        "decoder input": (B, L_tgt, d_model),
        "decoder output": (B, L_tgt, d_model),
        "logits": (B, L_tgt, vocab),
    }
    assert stack["encoder"][0].linear1.out_features == 4 * d_model  # the figure's MLP width


def run_model(ns, src, tgt):
    device = ns["src"].device
    with torch.no_grad():
        x = ns["embed"](src) + ns["position"](torch.arange(src.shape[1], device=device))
        for layer in ns["encoder"]:
            x = layer(x)
        y = ns["embed"](tgt) + ns["position"](torch.arange(tgt.shape[1], device=device))
        for layer in ns["decoder"]:
            y = layer(y, x, tgt_mask=ns["causal"])
        return ns["to_logits"](y)


def test_the_figures_model_is_the_snippets(stack):
    assert_close(run_model(stack, stack["src"], stack["tgt"]), stack["logits"].detach())


def test_decoder_reads_the_encoder_through_cross_attention(stack):
    src2 = (stack["src"] + 1) % stack["vocab"]
    before = run_model(stack, stack["src"], stack["tgt"])
    assert not torch.allclose(run_model(stack, src2, stack["tgt"]), before)


def test_decoder_self_attention_is_causal(stack):
    tgt2 = stack["tgt"].clone()
    tgt2[:, -1] = (tgt2[:, -1] + 1) % stack["vocab"]  # change the last target token only
    before = run_model(stack, stack["src"], stack["tgt"])
    after = run_model(stack, stack["src"], tgt2)
    assert_close(after[:, :-1], before[:, :-1])  # the earlier positions do not see it
    assert not torch.allclose(after[:, -1], before[:, -1])
