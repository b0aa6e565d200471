"""The page-block runner (tests/page_blocks.py) catches what it promises to catch."""

import pytest
from pymdownx.snippets import SnippetMissingError

from tests.page_blocks import BlockFailed, read_blocks, run_block

INCLUDE = '--8<-- "snippets/dot_product/two_vectors.py:{}"'
REAL_OUTPUT = "cat · dog = 1.70\ncat · car = 0.18\ncat · cat = 1.65\n"


def page(tmp_path, *parts: str):
    path = tmp_path / "page.md"
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return path


def python(code: str, attrs: str = "") -> str:
    return f"```python{attrs}\n{code}\n```"


def output(text: str) -> str:
    return f"<!--pytest-codeblocks:expected-output-->\n```text\n{text}```"


CONT = "<!--pytest-codeblocks:cont-->"


def run_all(blocks):
    namespaces = {}
    for index in range(len(blocks)):
        run_block(blocks, index, namespaces)


def test_included_block_with_its_real_output_passes(tmp_path):
    run_all(read_blocks(page(tmp_path, python(INCLUDE.format("dot")), output(REAL_OUTPUT))))


def test_wrong_section_name_fails(tmp_path):
    with pytest.raises(SnippetMissingError, match="no_such_section"):
        read_blocks(page(tmp_path, python(INCLUDE.format("no_such_section"))))


def test_missing_snippet_file_fails(tmp_path):
    with pytest.raises(SnippetMissingError, match="nowhere.py"):
        read_blocks(page(tmp_path, python('--8<-- "snippets/nowhere.py"')))


def test_block_that_raises_fails_and_names_the_page_line(tmp_path):
    blocks = read_blocks(page(tmp_path, "# Title", python("raise ValueError('boom')")))
    with pytest.raises(BlockFailed, match=r"page.md:3 raised ValueError"):
        run_all(blocks)


def test_changed_printed_output_fails(tmp_path):
    blocks = read_blocks(page(tmp_path, python(INCLUDE.format("dot")), output(REAL_OUTPUT.replace("1.70", "1.71"))))
    with pytest.raises(BlockFailed, match="printed output differs"):
        run_all(blocks)


def test_each_block_of_a_chain_is_its_own_test_with_its_own_output(tmp_path):
    blocks = read_blocks(
        page(tmp_path, python("a = 1\nprint(a)"), output("1\n"), CONT, python("a += 1\nprint(a)"), output("2\n"))
    )
    assert [(b.continues, b.expected_output) for b in blocks] == [(False, "1\n"), (True, "2\n")]
    run_all(blocks)


def test_continuation_run_alone_runs_its_predecessors_first(tmp_path):
    blocks = read_blocks(page(tmp_path, python("a = 41"), CONT, python("print(a + 1)"), output("42\n")))
    run_block(blocks, 1, {})


def test_continuation_of_a_failing_block_fails(tmp_path):
    blocks = read_blocks(page(tmp_path, python("1 / 0"), CONT, python("print('never')")))
    with pytest.raises(BlockFailed, match="the block this one continues failed"):
        run_block(blocks, 1, {})


def test_block_without_cont_marker_starts_fresh(tmp_path):
    blocks = read_blocks(page(tmp_path, python("a = 1"), python("print(a)")))
    with pytest.raises(BlockFailed, match="NameError"):
        run_all(blocks)


def test_fence_with_attributes_is_still_collected(tmp_path):
    # pytest-codeblocks alone would skip this block silently
    blocks = read_blocks(page(tmp_path, python("print('x')", ' title="demo.py"'), output("x\n")))
    assert len(blocks) == 1
    run_all(blocks)


def test_non_python_fences_are_not_run(tmp_path):
    blocks = read_blocks(page(tmp_path, "```text\nnot code\n```", "```console\n$ make test\n```"))
    assert blocks == []


# --- the GPU rule (REQUIRE_CUDA=1), with the meta device standing in for CUDA --------

SETUP = 'import torch\n\ndevice = "meta"  # stands in for "cuda"\ntorch.manual_seed(0)'


def run_on_accelerator(tmp_path, *codes):
    """Run a chain of blocks (each continuing the one before) under the GPU rule, with meta as the GPU."""
    parts = [python(codes[0])] + [CONT + "\n" + python(code) for code in codes[1:]]
    blocks = read_blocks(page(tmp_path, *parts))
    namespaces = {}
    for index in range(len(blocks)):
        run_block(blocks, index, namespaces, accelerator="meta")


RULE_PASSES = {
    "setup": [SETUP],
    "definitions": [SETUP, "def scores(q, k):\n    return q @ k.transpose(-2, -1)"],
    "compute on the accelerator": [
        SETUP,
        "x = torch.randn(4, 8).to(device)\nw = torch.softmax(x @ x.T, dim=-1)\nout = w @ x",
    ],
    "module built on cpu, moved": [
        SETUP,
        "lin = torch.nn.Linear(8, 8).to(device)\ny = lin(torch.randn(2, 8).to(device))",
    ],
    "views only": [SETUP, "x = torch.randn(2, 3, 4).to(device)", "y = x.transpose(1, 2).reshape(2, 12)[:, :4]"],
    "print only": [SETUP, "t = torch.tensor([0.5, 1.25])", "print(t)\nprint(f'{t[0].item():.2f}', t.tolist())"],
}

RULE_FAILS = {
    "everything on cpu": ([SETUP, "x = torch.randn(4, 8)\nprint(x @ x.T)"], "aten.mm on cpu"),
    "one tensor on the accelerator, compute on cpu": (
        [SETUP, "marker = torch.ones(1, device=device)\nx = torch.randn(4, 8)\ns = torch.softmax(x, -1)"],
        "aten._softmax on cpu",
    ),
    "continuation computes on cpu": (
        [SETUP, "x = torch.randn(4, 8).to(device)", "y = torch.randn(3).exp()"],
        "aten.exp on cpu",
    ),
}


@pytest.mark.parametrize("codes", RULE_PASSES.values(), ids=RULE_PASSES.keys())
def test_gpu_rule_passes_blocks_that_compute_only_on_the_accelerator(tmp_path, codes):
    run_on_accelerator(tmp_path, *codes)


@pytest.mark.parametrize("codes, op", RULE_FAILS.values(), ids=RULE_FAILS.keys())
def test_gpu_rule_fails_blocks_that_compute_on_the_cpu_and_names_the_op(tmp_path, codes, op):
    with pytest.raises(BlockFailed, match=rf"page.md:\d+: floating-point compute ran off meta: {op}"):
        run_on_accelerator(tmp_path, *codes)


def test_gpu_rule_checks_each_block_alone_not_the_blocks_it_continues(tmp_path):
    # the first block computes on cpu (and fails alone); the second, run after it, is judged by its own ops
    blocks = read_blocks(page(tmp_path, python("import torch\ny = torch.randn(3).exp()"), CONT, python("z = y")))
    run_block(blocks, 1, {}, accelerator="meta")
