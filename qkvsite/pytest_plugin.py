"""pytest plugin: run every Python block of every page exactly as a reader sees it.

Each Python block of each page ``docs/<name>.<lang>.md`` (read by ``qkvsite.dialect``, includes
expanded as MkDocs expands them) is its own test, ``docs/<page>::line N``. A ``cont`` block runs
after the blocks it continues, in one namespace; only its own printed output is compared with the
output block shown under it.

Options and switches:

- ``--update-outputs`` rewrites the pages' output blocks from this run instead of failing on a
  difference (run both editions to update both).
- ``REQUIRE_CUDA=1``: the run fails unless CUDA is available, and a block fails if any
  floating-point compute it runs happens off the GPU (``qkvsite.devices``).
- A block whose code declares ``# requires torch >= X.Y`` (or continues one that does) is skipped
  on an older torch.
- Every run that executes page blocks writes a verification record (``qkvsite.records``) to
  ``--record-dir``.
"""

from __future__ import annotations

import io
import os
import re
import traceback
from collections import Counter
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from qkvsite import config, machine, records
from qkvsite.dialect import Block, Page, version_tuple


def gpu_rule() -> str | None:
    """The device every block's floating-point compute must run on: "cuda" under REQUIRE_CUDA=1. A
    rehearsal on a machine without a GPU (``.ci/gpu-check --rehearse``) sets QKV_RULE_DEVICE=cpu and
    runs the same checks there."""
    return (
        os.environ.get("QKV_RULE_DEVICE", "cuda") if os.environ.get("REQUIRE_CUDA") == "1" else None
    )


def require_cuda() -> bool:
    return gpu_rule() == "cuda"


class BlockFailed(Exception):
    pass


def run_code(block: Block, namespace: dict) -> str:
    """Execute one block in ``namespace`` and return what it printed."""
    buffer = io.StringIO()
    try:
        with redirect_stdout(buffer):
            exec(compile(block.code, block.where, "exec"), namespace)
    except Exception as error:
        raise BlockFailed(
            f"{block.where} raised "
            f"{type(error).__name__}\n\n{block.code}\n{traceback.format_exc(limit=-3)}"
        ) from error
    return buffer.getvalue()


# PyTorch rewords a few error messages between releases; a page shows the pinned torch's wording,
# and the runs against other torch versions (make torch-versions) compare outputs with these
# differences removed.
VERSION_WORDING = [
    # torch >= 2.15 names the operator
    (re.compile(r"\b(?:mm|addmm|bmm|matmul): (?=mat1 and mat2)"), ""),
    (re.compile(r"\bat::Half\b"), "c10::Half"),  # torch < 2.10
]


def reworded(text: str) -> str:
    for pattern, replacement in VERSION_WORDING:
        text = pattern.sub(replacement, text)
    return text


# a number as a page prints it: not a piece of a name (float16) or of a version (2.13.0)
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?!\.?\d)")


def decimals(number: str) -> int:
    """The precision a number is written with: 0.153 -> 3, 1.5e-3 -> 4, 12 -> 0."""
    mantissa, _, exponent = number.lower().partition("e")
    return len(mantissa.partition(".")[2]) - int(exponent or 0)


def numbers_agree(expected: str, printed: str, tolerance: float | None) -> bool:
    """The same text around the numbers, and each number close to the one shown: to the precision it
    is written with (pytest's doctest NUMBER rule: 0.153 matches 0.1534, not 0.155), or within
    ``tolerance`` of it (relative). A number written without a fraction or exponent (a count)
    must be equal."""
    if NUMBER.split(expected) != NUMBER.split(printed):
        return False
    for shown, got in zip(NUMBER.findall(expected), NUMBER.findall(printed), strict=True):
        if not re.search(r"[.eE]", shown):
            if shown != got:
                return False
            continue
        allowed = 10.0 ** -decimals(shown)
        if tolerance is not None:
            allowed = max(allowed, tolerance * abs(float(shown)))
        if abs(float(got) - float(shown)) > allowed * (1 + 1e-9):
            return False
    return True


def same_output(block: Block, printed: str) -> bool:
    """Whether a block printed what its page shows, compared as its output fence says
    (``qkvsite.dialect.OUTPUT_OPTIONS``)."""
    expected, printed = reworded(block.expected_output), reworded(printed)
    if block.output.marker == "expected-output-ignore-whitespace":
        expected, printed = " ".join(expected.split()), " ".join(printed.split())
    comparison = block.output.comparison
    if "measured" in comparison:  # another machine measures other numbers: the form must hold
        return NUMBER.sub("#", expected) == NUMBER.sub("#", printed)
    if "numbers" in comparison or "tolerance" in comparison:
        tolerance = comparison.get("tolerance")
        return numbers_agree(expected, printed, None if tolerance is None else float(tolerance))
    return printed == expected


# what each chain printed, by accelerator and the code of the chain: both editions show the same
# code, which runs once per process (the editions differ in prose; each page's output is still
# compared with this)
PRINTED: dict[tuple, str] = {}

# What cannot run while a dispatch mode such as qkvsite.devices.DeviceLog watches (found by
# .ci/gpu-check --rehearse): torch.compile, which flex_attention calls even without it ("non-infra
# torch dispatch mode present"), and the CausalBias masks of torch.nn.attention.bias (a tensor
# subclass that cannot be created under a mode). A block that calls one runs on the accelerator
# unwatched: one of the GPU rule's limits, stated on the Verification page.
UNWATCHED = re.compile(
    r"\b(?:flex_attention|torch\.compile|causal_lower_right|causal_upper_left)\("
)


def run_block(
    page: Page, index: int, namespaces: dict[int, dict], accelerator: str | None = None
) -> str:
    """Run page.blocks[index] after the blocks it continues; return what it printed.

    ``namespaces`` keeps the namespace of the last block run, so a chain runs each block once
    when its tests run in order. A chain that already ran in this process (the same block on the
    other edition's page) is not run again: its printed output is returned. With an
    ``accelerator`` (``"cuda"`` under REQUIRE_CUDA=1), the block fails if any of its own
    floating-point compute ran on another device.
    """
    block = page.blocks[index]
    key = (accelerator, *(earlier.code for earlier in page.chain(index)), block.code)
    if key in PRINTED:
        # no namespace kept: a continuation with other code runs its chain afresh
        return PRINTED[key]
    namespace = namespaces.pop(index - 1, None) if block.continues else None
    if namespace is None:
        namespace = {"__name__": "__main__"}
        for earlier in page.chain(index):
            try:
                run_code(earlier, namespace)
            except BlockFailed as error:
                raise BlockFailed(f"the block this one continues failed:\n{error}") from None
    if accelerator and not UNWATCHED.search(block.code):
        from qkvsite.devices import DeviceLog

        with DeviceLog() as log:
            output = run_code(block, namespace)
        if off := log.off(accelerator):
            ops = ", ".join(f"{op} ({n}×)" for op, n in off.most_common())
            raise BlockFailed(f"{block.where}: floating-point compute ran off {accelerator}: {ops}")
    else:
        output = run_code(block, namespace)
    namespaces[index] = namespace
    PRINTED[key] = output
    return output


def check_output(block: Block, printed: str) -> None:
    if block.output is not None and not same_output(block, printed):
        raise BlockFailed(
            f"{block.where}: printed output differs from the page\n--- on the "
            f"page\n{block.expected_output}--- printed\n{printed}(pytest --update-outputs "
            "rewrites the page's output blocks from a run)"
        )


def update_output(path: Path, index: int, printed: str) -> None:
    """Replace the output block under the page's index-th Python block with what it printed; a
    measured output's fence then names this machine."""
    page = Page(path)  # parsed afresh: an earlier update may have moved the lines
    fence = page.blocks[index].output
    lines = page.text.split("\n")
    if "measured" in fence.comparison:
        where = machine.measured_on(machine.environment())
        lines[fence.start] = f'{fence.indent}{fence.ticks}text measured="{where}"'
    lines[fence.start + 1 : fence.end] = [
        fence.indent + line if line else line for line in printed.splitlines()
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def torch_version() -> str:
    import torch

    return torch.__version__


class MarkdownPage(pytest.File):
    def collect(self):
        self.page = Page(self.path)
        self.namespaces: dict[int, dict] = {}
        for index, block in enumerate(self.page.blocks):
            yield BlockItem.from_parent(self, name=f"line {block.lineno}", index=index)


class BlockItem(pytest.Item):
    def __init__(self, *, index: int, **kwargs):
        super().__init__(**kwargs)
        self.index = index

    @property
    def block(self) -> Block:
        return self.parent.page.blocks[self.index]

    def runtest(self):
        block = self.block
        if block.requires and version_tuple(torch_version()) < version_tuple(block.requires):
            pytest.skip(f"requires torch >= {block.requires}")
        printed = run_block(self.parent.page, self.index, self.parent.namespaces, gpu_rule())
        if (
            self.config.getoption("update_outputs")
            and block.output is not None
            and not same_output(block, printed)
        ):
            update_output(self.path, self.index, printed)
            return
        check_output(block, printed)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, BlockFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.block.lineno - 1, self.name


# --- pytest hooks ----------------------------------------------------------


def pytest_addoption(parser):
    group = parser.getgroup("qkv", "page blocks")
    group.addoption(
        "--update-outputs",
        action="store_true",
        help="rewrite the pages' output blocks from what the blocks print, instead of failing",
    )
    group.addoption(
        "--record-dir",
        default=os.environ.get("QKV_RECORD_DIR", str(config.ROOT / ".cache" / "verification")),
        help="where to write this run's verification record; verification/records/ holds the "
        "committed ones",
    )


def pytest_collect_file(file_path: Path, parent):
    # docs/<page>.<lang>.md; the generated docs/notebooks/ are not pages
    if file_path.parent.name == config.DOCS.name and config.PAGE_NAME.match(file_path.name):
        return MarkdownPage.from_parent(parent, path=file_path)


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
    rule = gpu_rule()
    mode = (
        f"REQUIRE_CUDA=1: every page block must compute on {rule}"
        if rule
        else "examples pick CUDA when available"
    )
    return [f"qkv: device {device}; torch {torch.__version__}; {mode}"]


# --- the verification record --------------------------------------------------


OUTCOMES = pytest.StashKey[dict]()
RECORD = pytest.StashKey[Path]()


def pytest_sessionstart(session):
    session.config.stash[OUTCOMES] = {"page_blocks": Counter(), "tests": Counter()}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    counts = item.config.stash[OUTCOMES]
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        for key in ["tests"] + (["page_blocks"] if isinstance(item, BlockItem) else []):
            counts[key][report.outcome] += 1
    return report


def pytest_sessionfinish(session, exitstatus):
    counts = session.config.stash.get(OUTCOMES, None)
    if not counts or not counts["page_blocks"] or session.config.getoption("update_outputs"):
        return  # no page block ran (or outputs were being rewritten): nothing to record
    summary = {key: {o: c[o] for o in ("passed", "failed", "skipped")} for key, c in counts.items()}
    command = " ".join(session.config.invocation_params.args)
    rec = records.record(require_cuda=require_cuda(), command=command, **summary)
    session.config.stash[RECORD] = records.write(rec, Path(session.config.getoption("record_dir")))


def pytest_terminal_summary(terminalreporter, config):
    path = config.stash.get(RECORD, None)
    if path:
        terminalreporter.write_line(f"qkv: verification record written to {path}")
