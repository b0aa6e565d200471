"""The figures a reader can move (figures/widgets.py, qkvsite/widgets.py): each widget's JSON, as
the build writes it, holds every state its control can reach, and each state's numbers are what the
chapter's snippet computes, checked here against PyTorch's own attention."""

import json
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from qkvsite import widgets
from qkvsite.hooks import widgets as hook
from tests.conftest import run_snippet

LANGS = ["zh", "en"]
NAMES = ["sdpa-temperature", "qkv-who-looks", "decoding-alignment"]


def built(name, lang) -> dict:
    """The JSON the build serves, which must be what the widget's function makes now."""
    served = widgets.widget_json(name, lang)
    assert served == widgets.to_json(widgets.compute(name, lang))
    return json.loads(served)


def attention_weights(q, k, **options):
    """PyTorch's attention weights: its output when V is the identity matrix."""
    eye = torch.eye(k.shape[-2], dtype=q.dtype, device=q.device)
    return F.scaled_dot_product_attention(q, k, eye, **options)


def test_every_declared_widget_is_registered_from_its_example():
    registered = widgets.load()
    assert sorted(widgets.declared()) == sorted(registered) == sorted(NAMES)
    assert {n: example for n, (example, _) in registered.items()} == widgets.declared()


@pytest.mark.parametrize("lang", LANGS)
def test_the_slider_reaches_every_d_k_and_each_row_is_softmax_with_and_without_the_scale(lang):
    data = built("sdpa-temperature", lang)
    ns = run_snippet("scaled_dot_product/one_row.py")
    assert [s["d_k"] for s in data["states"]] == [2**i for i in range(11)]
    q, k = ns["q"].cpu(), ns["k"].cpu()
    for state in data["states"]:
        d_k = state["d_k"]
        qd, kd = q[None, :d_k], k[:, :d_k]  # (1, d_k), (8, d_k)
        raw = attention_weights(qd, kd, scale=1.0)[0]  # (8,)
        scaled = attention_weights(qd, kd)[0]  # sdpa's default scale: 1/√d_k
        assert len(state["raw"]) == len(state["scaled"]) == data["keys"] == 8
        assert_close(torch.tensor(state["raw"]), raw, atol=1e-6, rtol=0)
        assert_close(torch.tensor(state["scaled"]), scaled, atol=1e-6, rtol=0)
    # what the widget shows: the unscaled row saturates, the scaled one does not
    assert max(data["states"][-1]["raw"]) > 0.99 > 0.7 > max(data["states"][-1]["scaled"])


@pytest.mark.parametrize("lang", LANGS)
def test_every_token_can_be_picked_and_its_weights_are_its_row_of_the_chapters_attention(lang):
    data = built("qkv-who-looks", lang)
    ns = run_snippet("qkv/verb_subject.py")
    assert len(data["tokens"]) == len(data["states"]) == len(ns["tokens"]) == 3
    assert [s["token"] for s in data["states"]] == [0, 1, 2]
    # chapter 2 leaves the scale out: scale=1
    A = attention_weights(ns["Q"].cpu(), ns["K"].cpu(), scale=1.0)  # (3, 3)
    assert_close(torch.tensor([s["weights"] for s in data["states"]]), A, atol=1e-6, rtol=0)
    # the trace the chapter prints for "bites": 0.844 0.042 0.114
    assert [f"{w:.3f}" for w in data["states"][1]["weights"]] == ["0.844", "0.042", "0.114"]
    assert data["tokens"][1].startswith("bites")


@pytest.mark.parametrize("lang", LANGS)
def test_both_alignments_show_the_keys_that_sdpa_lets_each_new_token_see(lang):
    data = built("decoding-alignment", lang)
    ns = run_snippet("decoding/causal_alignment.py")
    L_q, L_k = ns["L_q"], ns["L_k"]
    assert (L_q, L_k) == (3, 7) and data["keys"] == L_k and data["queries"] == [4, 5, 6]
    q, k = ns["q"].cpu(), ns["k"].cpu()
    allowed = torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q)
    expected = {
        "upper_left": attention_weights(q, k, is_causal=True)[0, 0] > 0,
        "lower_right": attention_weights(q, k, attn_mask=allowed)[0, 0] > 0,
    }
    assert [s["mask"] for s in data["states"]] == ["upper_left", "lower_right"]
    for state in data["states"]:
        assert state["seen"] == expected[state["mask"]].int().tolist()


@pytest.mark.parametrize("name", NAMES)
def test_both_editions_have_the_same_numbers_and_every_label_in_their_language(name):
    zh, en = (built(name, lang) for lang in LANGS)
    assert zh.keys() == en.keys() and zh["text"].keys() == en["text"].keys()
    assert {k: v for k, v in zh.items() if k not in ("text", "tokens")} == {
        k: v for k, v in en.items() if k not in ("text", "tokens")
    }
    assert zh["text"]["title"] != en["text"]["title"]
    assert all(zh["text"].values()) and all(en["text"].values())


def config(lang):
    """What the hooks read of MkDocs' config: the language being built."""
    return SimpleNamespace(plugins={"i18n": SimpleNamespace(current_language=lang)})


MARK = '<div class="qkv-widget" data-widget="sdpa-temperature"></div>'


@pytest.mark.parametrize(
    "lang, url, src",
    [
        ("zh", "scaled-dot-product/", "../widgets/sdpa-temperature.json"),
        ("en", "en/scaled-dot-product/", "../widgets/sdpa-temperature.json"),
        ("en", "en/", "widgets/sdpa-temperature.json"),
    ],
)
def test_a_mark_points_to_its_editions_json(lang, url, src):
    page = SimpleNamespace(url=url, file=SimpleNamespace(src_uri="p.md"))
    html = hook.point_to_data(f"<p>x</p>{MARK}", page, config(lang))
    assert f'data-widget="sdpa-temperature" data-src="{src}">' in html


def test_a_mark_of_an_undeclared_widget_fails_the_build():
    page = SimpleNamespace(url="qkv/", file=SimpleNamespace(src_uri="qkv.en.md"))
    with pytest.raises(ValueError, match="no widget 'nothing'"):
        hook.point_to_data(
            '<div class="qkv-widget" data-widget="nothing"></div>', page, config("en")
        )


def test_only_a_page_with_a_widget_loads_the_viewer():
    page = SimpleNamespace(url="en/scaled-dot-product/")
    with_widget = hook.load_viewer(f"<body>{MARK}</body>", page)
    assert with_widget.endswith('<script src="../../javascripts/widgets.js" defer></script></body>')
    assert hook.load_viewer("<body><p>x</p></body>", page) == "<body><p>x</p></body>"


def test_a_cached_json_is_reused_and_a_new_key_computes_it_again(monkeypatch, tmp_path):
    monkeypatch.setattr(widgets, "CACHE", widgets.Cache("widgets-test"))
    monkeypatch.setattr(widgets.CACHE, "directory", tmp_path)
    calls = []
    monkeypatch.setattr(widgets, "compute", lambda n, lang: calls.append(n) or {"n": n})
    assert widgets.widget_json("qkv-who-looks", "en") == b'{"n":"qkv-who-looks"}'
    assert widgets.widget_json("qkv-who-looks", "en") == b'{"n":"qkv-who-looks"}'
    assert calls == ["qkv-who-looks"]
    widgets.widget_json("qkv-who-looks", "zh")
    assert calls == ["qkv-who-looks"] * 2
