"""The page-block runner (tests/page_blocks.py) catches what it promises to catch."""

import pytest
from pymdownx.snippets import SnippetMissingError

from tests.page_blocks import BlockFailed, only_defines, read_blocks, run_block

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


@pytest.mark.parametrize(
    "code, expected",
    [
        ("import torch\n\ndef f(x):\n    return x\n\nclass M:\n    pass", True),
        ('"""doc"""\nimport torch', True),
        ("import torch\nx = torch.ones(3)", False),
        ("def f():\n    pass\nf()", False),
    ],
    ids=["defs", "docstring", "assignment", "call"],
)
def test_only_definition_blocks_are_exempt_from_the_cuda_work_check(code, expected):
    assert only_defines(code) is expected
