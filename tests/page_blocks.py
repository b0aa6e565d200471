"""pytest plugin: run every Python block of every page exactly as a reader sees it.

pytest-codeblocks reads raw Markdown, so ``--8<--`` includes would reach it
unexpanded. This plugin expands them with the pymdownx.snippets settings from
mkdocs.yml, then hands the text to pytest-codeblocks' parser and keeps its
markers (``cont``, ``expected-output``, ``pytest.mark.*``).

One difference from pytest-codeblocks: it merges a ``cont`` block into the
block above, which would leave one test and one output check for a whole
chain. Here every rendered block is its own test; a continuation runs after
the blocks it continues, in one namespace, and only its own output is
compared with the output shown under it.

With ``REQUIRE_CUDA=1`` the run fails unless CUDA is available, and a block
fails if any floating-point compute it runs happens off the GPU: the device of
every ATen operation is recorded (``qkvsite.devices``). Making data, moving it
and printing it may happen on the CPU.
"""

from __future__ import annotations

import io
import os
import re
import traceback
from collections import Counter
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
from pytest_codeblocks import extract_from_buffer

from qkvsite import records
from qkvsite.devices import DeviceLog
from snippets import notebooks

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PYTHON = {"python", "py"}
CONT = "pytest.mark.qkv_continues"  # internal stand-in for <!--pytest-codeblocks:cont-->
CONT_MARKER = re.compile(r"^(\s*)<!--[-\s]*pytest-codeblocks:cont[-\s]*-->\s*$", re.MULTILINE)


def require_cuda() -> bool:
    return os.environ.get("REQUIRE_CUDA") == "1"


# --- reading pages ---------------------------------------------------------


@cache
def snippet_settings() -> dict:
    """The pymdownx.snippets options exactly as mkdocs.yml sets them."""
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    settings = dict(config["mdx_configs"]["pymdownx.snippets"])
    settings["base_path"] = [str(ROOT / base) for base in settings.get("base_path", ["."])]
    return settings


def expand_includes(text: str) -> str:
    return notebooks.expand_includes(text, snippet_settings())


def syntax_of(block) -> str:
    """First word of the fence info: ```python title="x"``` is Python too."""
    words = (block.syntax or "").replace("{", " ").replace(".", " ").split()
    return words[0] if words else ""


@dataclass
class PageBlock:
    page: Path
    lineno: int  # line of the opening fence in the page's Markdown
    code: str
    expected_output: str | None
    continues: bool
    marks: list[str] = field(default_factory=list)


def read_blocks(page: Path) -> list[PageBlock]:
    """All Python blocks of a page, includes expanded, in page order."""
    raw = page.read_text(encoding="utf-8")

    def parse(text: str):
        return [b for b in extract_from_buffer(io.StringIO(CONT_MARKER.sub(rf"\1<!--{CONT}-->", text)))]

    raw_blocks, blocks = parse(raw), parse(expand_includes(raw))
    if len(raw_blocks) != len(blocks):
        raise RuntimeError(f"{page}: {len(raw_blocks)} fences before expanding includes, {len(blocks)} after")
    out = []
    for raw_block, block in zip(raw_blocks, blocks, strict=True):
        if syntax_of(block) not in PYTHON:
            continue
        marks = [m for m in block.marks if m != CONT]
        out.append(PageBlock(page, raw_block.lineno, block.code, block.expected_output, CONT in block.marks, marks))
    if out and out[0].continues:
        raise RuntimeError(f"{page}:{out[0].lineno}: the first Python block cannot continue another")
    return out


def chain_of(blocks: list[PageBlock], index: int) -> list[PageBlock]:
    """The blocks that must run before blocks[index], oldest first."""
    start = index
    while blocks[start].continues:
        start -= 1
    return blocks[start:index]


GENERATED = DOCS / "notebooks"  # written at build time from the pages themselves


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if GENERATED not in p.parents)


# --- running blocks --------------------------------------------------------


class BlockFailed(Exception):
    pass


def where(block: PageBlock) -> str:
    page = block.page.relative_to(ROOT) if block.page.is_relative_to(ROOT) else block.page
    return f"{page}:{block.lineno}"


def run_code(block: PageBlock, namespace: dict) -> str:
    """Execute one block in ``namespace`` and return what it printed."""
    buffer = io.StringIO()
    try:
        with redirect_stdout(buffer):
            exec(compile(block.code, where(block), "exec"), namespace)
    except Exception as error:
        raise BlockFailed(
            f"{where(block)} raised {type(error).__name__}\n\n{block.code}\n{traceback.format_exc(limit=-3)}"
        ) from error
    return buffer.getvalue()


def run_block(blocks: list[PageBlock], index: int, namespaces: dict[int, dict], accelerator: str | None = None):
    """Run blocks[index] after the blocks it continues; check its output against the page.

    ``namespaces`` keeps the namespace of the last block run, so a chain runs
    each block once when its tests run in order. With an ``accelerator``
    (``"cuda"`` under REQUIRE_CUDA=1), the block fails if any of its own
    floating-point compute ran on another device (``qkvsite.devices``).
    """
    block = blocks[index]
    namespace = namespaces.pop(index - 1, None) if block.continues else None
    if namespace is None:
        namespace = {"__name__": "__main__"}
        for earlier in chain_of(blocks, index):
            try:
                run_code(earlier, namespace)
            except BlockFailed as error:
                raise BlockFailed(f"the block this one continues failed:\n{error}") from None
    if accelerator:
        with DeviceLog() as log:
            output = run_code(block, namespace)
        if off := log.off(accelerator):
            ops = ", ".join(f"{op} ({n}×)" for op, n in off.most_common())
            raise BlockFailed(f"{where(block)}: floating-point compute ran off {accelerator}: {ops}")
    else:
        output = run_code(block, namespace)
    namespaces[index] = namespace
    if block.expected_output is not None and output != block.expected_output:
        raise BlockFailed(
            f"{where(block)}: printed output differs from the page\n"
            f"--- on the page\n{block.expected_output}--- printed\n{output}"
        )


class MarkdownPage(pytest.File):
    def collect(self):
        self.blocks = read_blocks(self.path)
        self.namespaces: dict[int, dict] = {}
        for index, block in enumerate(self.blocks):
            item = BlockItem.from_parent(self, name=f"line {block.lineno}", index=index)
            for mark in block.marks:
                item.add_marker(eval(mark, {"pytest": pytest}))
            yield item


class BlockItem(pytest.Item):
    def __init__(self, *, index: int, **kwargs):
        super().__init__(**kwargs)
        self.index = index

    def runtest(self):
        page: MarkdownPage = self.parent
        run_block(page.blocks, self.index, page.namespaces, "cuda" if require_cuda() else None)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, BlockFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.parent.blocks[self.index].lineno - 1, self.name


# --- pytest hooks ----------------------------------------------------------


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix == ".md" and DOCS in file_path.parents and GENERATED not in file_path.parents:
        return MarkdownPage.from_parent(parent, path=file_path)


def pytest_addoption(parser):
    parser.addoption(
        "--record-dir",
        default=str(ROOT / ".cache" / "verification"),
        help="where to write this run's verification record (qkvsite.records); "
        "verification/records/ holds the committed ones",
    )


def pytest_configure(config):
    os.environ.setdefault("MPLBACKEND", "Agg")
    if require_cuda():
        import torch

        if not torch.cuda.is_available():
            raise pytest.UsageError("REQUIRE_CUDA=1 but torch.cuda.is_available() is False")


def pytest_report_header(config):
    import torch

    if torch.cuda.is_available():
        device = f"cuda ({torch.cuda.get_device_name(0)})"
    else:
        device = "cpu (CUDA not available)"
    mode = (
        "REQUIRE_CUDA=1: every page block must run on CUDA" if require_cuda() else "examples pick CUDA when available"
    )
    return [f"qkv: device {device}; torch {torch.__version__}; {mode}"]


# --- the verification record --------------------------------------------------


def pytest_sessionstart(session):
    session.config._qkv_outcomes = {"page_blocks": Counter(), "tests": Counter()}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    counts = item.config._qkv_outcomes
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        for key in ["tests"] + (["page_blocks"] if isinstance(item, BlockItem) else []):
            counts[key][report.outcome] += 1
    return report


def pytest_sessionfinish(session, exitstatus):
    counts = getattr(session.config, "_qkv_outcomes", None)
    if not counts or not counts["page_blocks"]:
        return  # no page block ran: nothing to record
    summary = {key: {o: c[o] for o in ("passed", "failed", "skipped")} for key, c in counts.items()}
    command = " ".join(session.config.invocation_params.args)
    rec = records.record(require_cuda=require_cuda(), command=command, **summary)
    path = records.write(rec, Path(session.config.getoption("record_dir")))
    session.config._qkv_record = path


def pytest_terminal_summary(terminalreporter, config):
    path = getattr(config, "_qkv_record", None)
    if path:
        terminalreporter.write_line(f"qkv: verification record written to {path}")
