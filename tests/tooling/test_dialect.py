"""qkvsite.dialect, the one parser of the page dialect, reads every page as pytest-codeblocks
does."""

import io
import re

import pytest
from pytest_codeblocks import extract_from_buffer

from qkvsite import config
from qkvsite.dialect import DialectError, Page, expand, scan

PAGES = config.source_pages()


def pytest_codeblocks_view(text: str):
    """The Python blocks pytest-codeblocks reads from a page: (line, code, expected output,
    continues).

    pytest-codeblocks merges a `cont` block into the block above; the marker is renamed here so
    that every fence stays its own block, as the site's runner treats it.
    """
    text = re.sub(r"<!--\s*pytest-codeblocks:cont\s*-->", "<!--pytest.mark.qkv_cont-->", text)
    blocks = extract_from_buffer(io.StringIO(text))
    python = [b for b in blocks if (b.syntax or "").split(" ")[0] in {"python", "py"}]
    return [
        (b.lineno, b.code, b.expected_output, "pytest.mark.qkv_cont" in b.marks) for b in python
    ]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_dialect_reads_each_python_block_as_pytest_codeblocks_does(page):
    parsed = Page(page)
    raw = pytest_codeblocks_view(parsed.text)
    assert [(b.lineno, b.expected_output, b.continues) for b in parsed.blocks] == [
        (r[0], r[2], r[3]) for r in raw
    ]
    lines = parsed.text.split("\n")
    # the includes expanded in place, as MkDocs renders the page
    for block in reversed(parsed.blocks):
        fence = block.fence
        lines[fence.start + 1 : fence.end] = [
            fence.indent + line if line else line for line in block.code.split("\n")[:-1]
        ]
    expanded = pytest_codeblocks_view("\n".join(lines))

    def lines_of(code, indented):
        # pytest-codeblocks drops the blank lines of an indented fence (it strips their newline as
        # indentation)
        return [line for line in code.split("\n") if line] if indented else code.split("\n")

    for block, (_, their_code, *_) in zip(parsed.blocks, expanded, strict=True):
        indented = bool(block.fence.indent)
        assert lines_of(block.code, indented) == lines_of(their_code, indented), block.where


def test_a_marker_followed_by_prose_is_an_error():
    with pytest.raises(DialectError, match="not followed by a fence"):
        scan("<!--pytest-codeblocks:cont-->\nsome prose\n\n```python\nx = 1\n```\n")


def test_an_unknown_marker_is_an_error():
    with pytest.raises(DialectError, match="unknown marker 'skip'"):
        scan("<!--pytest-codeblocks:skip-->\n```python\nx = 1\n```\n")


def test_an_output_needs_a_python_block_above_it(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!--pytest-codeblocks:expected-output-->\n```text\n1\n```\n", encoding="utf-8")
    with pytest.raises(DialectError, match="no Python block above it"):
        _ = Page(page).blocks


def test_a_requirement_declared_in_a_section_carries_over_to_the_blocks_that_continue_it(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\n# requires torch >= 2.5\nx = "
        "1\n```\n\n<!--pytest-codeblocks:cont-->\n```python\ny = x\n```\n\n```python\nz = "
        "2\n```\n",
        encoding="utf-8",
    )
    assert [b.requires for b in Page(page).blocks] == ["2.5", "2.5", None]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_figures_are_read_with_their_alt_text_and_caption(page):
    text = page.read_text(encoding="utf-8")
    figures = Page(page).figures
    assert len(figures) == len(re.findall(r"^!\[[^\]]*\]\(figures/", text, re.M))
    for figure in figures:
        assert figure.alt and figure.caption, f"{page.name}:{figure.lineno}"


def test_an_edited_snippet_expands_anew_in_the_same_process(tmp_path):
    # expansions are kept per process (mkdocs serve rebuilds every page on every edit): the key
    # holds the included files' text, so an edited section is never served from before the edit
    snippet = tmp_path / "snippets" / "x.py"
    snippet.parent.mkdir()
    settings = {**config.snippet_settings(), "base_path": [str(tmp_path)]}
    body = '--8<-- "snippets/x.py:s"\n'
    for value in (1, 2):
        snippet.write_text(f"# --8<-- [start:s]\nx = {value}\n# --8<-- [end:s]\n", encoding="utf-8")
        assert expand(body, settings) == f"x = {value}\n"
