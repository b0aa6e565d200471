"""The idea first: the block a reader learns each core idea from is short (its input checks live in
the robust version the chapter shows folded after it). Lines are counted as shown: every non-blank
line of the section, its import, docstrings and comments included."""

import re

import pytest

from qkvsite.config import ROOT

# (snippet file, section) -> the most lines it may take
CORE = {
    ("snippets/scaled_dot_product/attention.py", "core"): 15,  # scaled dot-product attention
    ("snippets/multi_head/multi_head_attention.py", "module"): 40,  # multi-head attention
    ("snippets/qkv/qkv_projection.py", "module"): 15,  # the Q/K/V projection
}


def section_lines(path: str, section: str) -> list[str]:
    text = (ROOT / path).read_text(encoding="utf-8")
    match = re.search(
        rf"^\s*# --8<-- \[start:{section}\]\n(.*?)^\s*# --8<-- \[end:{section}\]", text, re.M | re.S
    )
    assert match, f"{path} has no section {section!r}"
    return [line for line in match[1].splitlines() if line.strip()]


@pytest.mark.parametrize(("path", "section"), CORE, ids=[f"{p}:{s}" for p, s in CORE])
def test_a_core_block_shows_its_idea_in_a_few_lines(path, section):
    lines = section_lines(path, section)
    assert len(lines) <= CORE[path, section], f"{path}:{section} has {len(lines)} lines"
    assert not any("raise " in line for line in lines), (
        "its input checks belong in the robust version"
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("path", "section"), CORE, ids=[f"{p}:{s}" for p, s in CORE])
def test_the_page_shows_the_core_block_unfolded_before_its_robust_version(path, section, lang):
    page = {
        "scaled_dot_product": "scaled-dot-product",
        "multi_head": "multi-head",
        "qkv": "qkv",
    }[path.split("/")[1]]
    text = (ROOT / "docs" / f"{page}.{lang}.md").read_text(encoding="utf-8")
    include = f'--8<-- "{path}:{section}"'
    assert include in text, f"{page}.{lang}.md does not show {path}:{section}"
    line = next(line for line in text.splitlines() if include in line)
    assert not line.startswith((" ", "\t")), "the core block is not inside a folded box"
    robust = text.find(f'--8<-- "{path}:robust"')
    assert robust == -1 or text.index(include) < robust, "the idea comes before its checks"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tiny_decoder_is_folded_and_the_cache_is_shown_as_its_new_lines(lang):
    """Chapter 8: the whole decoder is one click away, not open; what the KV cache changes in it is
    shown by itself, each changed line marked # NEW."""
    text = (ROOT / "docs" / f"decoding.{lang}.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    module = next(i for i, line in enumerate(lines) if "tiny_decoder.py:module" in line)
    opener = next(
        line for line in reversed(lines[:module]) if not line.startswith((" ", "\t")) and line
    )
    assert opener.startswith("??? "), f"the decoder's module is not folded: {opener!r}"
    shown = [
        line
        for section in ("kv_cache", "attention_forward", "decoder_forward")
        for line in section_lines("snippets/decoding/tiny_decoder.py", section)
    ]
    assert f'tiny_decoder.py:{"kv_cache"}"' in text
    assert sum("# NEW" in line for line in shown) >= 5
    assert len(shown) < len(section_lines("snippets/decoding/tiny_decoder.py", "module")) / 2
