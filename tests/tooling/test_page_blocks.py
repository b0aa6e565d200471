"""The page-block runner (qkvsite.pytest_plugin) catches what it promises to catch."""

import json
import sys

import pytest
import torch
from pymdownx.snippets import SnippetMissingError

from qkvsite import machine, pytest_plugin, records
from qkvsite.dialect import Page
from qkvsite.pytest_plugin import BlockFailed, check_output, reworded, run_block

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


@pytest.fixture(autouse=True)
def no_chain_ran_yet(monkeypatch):
    """Each test starts with no chain run in this process (run_block runs a chain once per
    process)."""
    monkeypatch.setattr(pytest_plugin, "PRINTED", {})


def run_all(page, accelerator=None):
    """Run every block of a page in order, as pytest does, and check each output."""
    namespaces = {}
    for index, block in enumerate(page.blocks):
        check_output(block, run_block(page, index, namespaces, accelerator))


def test_included_block_with_its_real_output_passes(tmp_path):
    run_all(Page(page(tmp_path, python(INCLUDE.format("dot")), output(REAL_OUTPUT))))


def test_wrong_section_name_fails(tmp_path):
    with pytest.raises(SnippetMissingError, match="no_such_section"):
        # expanding fails
        _ = Page(page(tmp_path, python(INCLUDE.format("no_such_section")))).blocks


def test_missing_snippet_file_fails(tmp_path):
    with pytest.raises(SnippetMissingError, match="nowhere.py"):
        _ = Page(page(tmp_path, python('--8<-- "snippets/nowhere.py"'))).blocks


def test_block_that_raises_fails_and_names_the_page_line(tmp_path):
    with pytest.raises(BlockFailed, match=r"page.md:3 raised ValueError"):
        run_all(Page(page(tmp_path, "# Title", python("raise ValueError('boom')"))))


def test_changed_printed_output_fails(tmp_path):
    changed = output(REAL_OUTPUT.replace("1.70", "1.71"))
    with pytest.raises(BlockFailed, match="printed output differs"):
        run_all(Page(page(tmp_path, python(INCLUDE.format("dot")), changed)))


def test_each_block_of_a_chain_is_its_own_test_with_its_own_output(tmp_path):
    chain = Page(
        page(
            tmp_path,
            python("a = 1\nprint(a)"),
            output("1\n"),
            CONT,
            python("a += 1\nprint(a)"),
            output("2\n"),
        )
    )
    assert [(b.continues, b.expected_output) for b in chain.blocks] == [
        (False, "1\n"),
        (True, "2\n"),
    ]
    run_all(chain)


def test_continuation_run_alone_runs_its_predecessors_first(tmp_path):
    chain = Page(page(tmp_path, python("a = 41"), CONT, python("print(a + 1)"), output("42\n")))
    assert run_block(chain, 1, {}) == "42\n"


def test_a_chain_the_other_edition_ran_runs_once_and_each_pages_output_is_still_compared(tmp_path):
    counter = (
        "import itertools, sys\nruns = sys.modules.setdefault('qkv_runs', "
        "itertools.count())\nnext(runs)"
    )
    shared = [python(counter), CONT, python("print('same code')")]
    zh, en, other = (tmp_path / name for name in ("zh", "en", "other"))
    for directory in (zh, en, other):
        directory.mkdir()
    run_all(Page(page(zh, *shared, output("same code\n"))))
    run_all(Page(page(en, *shared, output("same code\n"))))
    assert next(sys.modules.pop("qkv_runs")) == 1  # the first block ran once, for both pages
    with pytest.raises(BlockFailed, match="printed output differs"):
        run_all(Page(page(en, *shared, output("another output\n"))))
    # a continuation with code of its own runs the shared blocks it continues again, in a namespace
    # of its own
    run_all(Page(page(other, *shared, CONT, python("print(next(runs))"), output("1\n"))))
    del sys.modules["qkv_runs"]


def test_continuation_of_a_failing_block_fails(tmp_path):
    chain = Page(page(tmp_path, python("1 / 0"), CONT, python("print('never')")))
    with pytest.raises(BlockFailed, match="the block this one continues failed"):
        run_block(chain, 1, {})


def test_block_without_cont_marker_starts_fresh(tmp_path):
    with pytest.raises(BlockFailed, match="NameError"):
        run_all(Page(page(tmp_path, python("a = 1"), python("print(a)"))))


def test_fence_with_attributes_is_still_collected(tmp_path):
    # pytest-codeblocks alone would skip this block silently
    titled = Page(page(tmp_path, python("print('x')", ' title="demo.py"'), output("x\n")))
    assert len(titled.blocks) == 1
    run_all(titled)


def test_non_python_fences_are_not_run(tmp_path):
    assert (
        Page(page(tmp_path, "```text\nnot code\n```", "```console\n$ make test\n```")).blocks == []
    )


# --- the GPU rule (REQUIRE_CUDA=1), with the meta device standing in for CUDA --------

SETUP = 'import torch\n\ndevice = "meta"  # stands in for "cuda"\ntorch.manual_seed(0)'


def run_on_accelerator(tmp_path, *codes):
    """Run a chain of blocks (each continuing the one before) under the GPU rule, with meta as the
    GPU."""
    parts = [python(codes[0])] + [CONT + "\n" + python(code) for code in codes[1:]]
    run_all(Page(page(tmp_path, *parts)), accelerator="meta")


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
    "views only": [
        SETUP,
        "x = torch.randn(2, 3, 4).to(device)",
        "y = x.transpose(1, 2).reshape(2, 12)[:, :4]",
    ],
    "print only": [
        SETUP,
        "t = torch.tensor([0.5, 1.25])",
        "print(t)\nprint(f'{t[0].item():.2f}', t.tolist())",
    ],
    "data made and joined on cpu, then moved": [
        SETUP,
        "steps = torch.linspace(0, 1, 4)\nrows = torch.stack([steps, steps])\nx = torch.cat([rows, "
        "rows]).to(device)",
    ],
}

RULE_FAILS = {
    "everything on cpu": ([SETUP, "x = torch.randn(4, 8)\nprint(x @ x.T)"], "aten.mm on cpu"),
    "one tensor on the accelerator, compute on cpu": (
        [
            SETUP,
            "marker = torch.ones(1, device=device)\n"
            "x = torch.randn(4, 8)\ns = torch.softmax(x, -1)",
        ],
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
    with pytest.raises(
        BlockFailed, match=rf"page.md:\d+: floating-point compute ran off meta: {op}"
    ):
        run_on_accelerator(tmp_path, *codes)


def test_gpu_rule_checks_each_block_alone_not_the_blocks_it_continues(tmp_path):
    # the first block computes on cpu (and fails alone); the second, run after it, is judged by its
    # own ops
    chain = Page(
        page(tmp_path, python("import torch\ny = torch.randn(3).exp()"), CONT, python("z = y"))
    )
    run_block(chain, 1, {}, accelerator="meta")


def test_gpu_rule_leaves_unwatched_what_pytorch_cannot_run_under_it_and_watches_the_rest(tmp_path):
    # torch.nn.attention.bias's CausalBias cannot be created under a dispatch mode (found by
    # gpu-check --rehearse)
    bias = (
        "from torch.nn.attention.bias import causal_lower_right\nmask = causal_lower_right(2, "
        "3)\ny = x.exp()"
    )
    # runs, unwatched: exp on cpu is not seen
    run_on_accelerator(tmp_path, SETUP, "x = torch.randn(3)", bias)
    with pytest.raises(BlockFailed, match="aten.exp on cpu"):
        run_on_accelerator(tmp_path, SETUP, "x = torch.randn(3)", "y = x.exp()")


# --- the plugin through pytest's own collection (pytester) ---

pytest_plugins = ["pytester"]

CHAIN = "\n\n".join(
    [
        "# A page",
        python("import torch\nx = torch.ones(3)\nprint(int(x.sum()))"),
        output("3\n"),
        CONT,
        python("x = x * 2\nprint(int(x.sum()))"),
        output("6\n"),
        python("print('fresh')"),
        output("fresh\n"),
    ]
)


@pytest.fixture
def project(pytester, monkeypatch, tmp_path_factory):
    monkeypatch.setenv(
        "QKV_RECORD_DIR", str(tmp_path_factory.mktemp("records"))
    )  # not the repository's
    pytester.makeconftest('pytest_plugins = ["qkvsite.pytest_plugin"]')
    pytester.mkdir("docs")
    return pytester


def test_pytest_collects_every_block_of_a_page_as_its_own_test(project):
    (project.path / "docs" / "page.zh.md").write_text(CHAIN + "\n", encoding="utf-8")
    result = project.runpytest("docs", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["*docs/page.zh.md::line 3 PASSED*", "*line 16 PASSED*", "*line 26 PASSED*"]
    )


def test_a_continuation_selected_alone_runs_the_blocks_it_continues_first(project):
    (project.path / "docs" / "page.zh.md").write_text(CHAIN + "\n", encoding="utf-8")
    project.runpytest("docs/page.zh.md::line 16", "-p", "no:cacheprovider").assert_outcomes(
        passed=1
    )


def test_generated_notebook_pages_are_not_collected(project):
    (project.path / "docs" / "notebooks").mkdir()
    (project.path / "docs" / "notebooks" / "page.zh.md").write_text(CHAIN + "\n", encoding="utf-8")
    # not <page>.<lang>.md
    (project.path / "docs" / "notes.md").write_text(CHAIN + "\n", encoding="utf-8")
    project.runpytest("docs", "-p", "no:cacheprovider").assert_outcomes()


def test_update_outputs_rewrites_a_changed_output_and_the_next_run_passes(project):
    page = project.path / "docs" / "page.en.md"
    page.write_text(CHAIN.replace("6\n", "7\n") + "\n", encoding="utf-8")
    project.runpytest("docs", "-p", "no:cacheprovider").assert_outcomes(passed=2, failed=1)
    project.runpytest("docs", "--update-outputs", "-p", "no:cacheprovider").assert_outcomes(
        passed=3
    )
    assert page.read_text(encoding="utf-8") == CHAIN + "\n"
    project.runpytest("docs", "-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_a_block_that_requires_a_newer_torch_is_skipped_with_the_blocks_that_continue_it(project):
    newer = CHAIN.replace("import torch\n", "# requires torch >= 99.0\nimport torch\n")
    (project.path / "docs" / "page.zh.md").write_text(newer + "\n", encoding="utf-8")
    result = project.runpytest("docs", "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*requires torch >= 99.0*"])


def test_a_run_writes_its_verification_record(project, tmp_path):
    (project.path / "docs" / "page.zh.md").write_text(
        CHAIN.replace("6\n", "7\n") + "\n", encoding="utf-8"
    )
    project.runpytest("docs", f"--record-dir={tmp_path}", "-p", "no:cacheprovider")
    (path,) = tmp_path.glob("*.json")
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["page_blocks"] == {"passed": 2, "failed": 1, "skipped": 0}
    assert record["device"] == "cpu" and record["torch"] == torch.__version__
    assert (
        record["pages"] == records.fingerprint()
    )  # the site's pages, which a run of one page does not complete
    assert not records.complete(record)


def test_an_output_in_another_torch_versions_wording_still_matches():
    page_says = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x3)\n"
    assert (
        reworded("RuntimeError: mm: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x3)\n")
        == page_says
    )
    assert reworded("value cannot be converted to type at::Half without overflow") == reworded(
        "value cannot be converted to type c10::Half without overflow"
    )


# --- how an output is compared: exactly, to the precision shown, within a tolerance, by form ---


def printing(text: str) -> str:
    """A block that prints ``text`` (written as Python, as a reader would paste it)."""
    return python(f"print({text!r}, end='')")


def fenced(text: str, option: str) -> str:
    return f"<!--pytest-codeblocks:expected-output-->\n```text {option}\n{text}```"


def check(tmp_path, shown: str, printed: str, option: str = "") -> bool:
    parts = [printing(printed), fenced(shown, option) if option else output(shown)]
    try:
        run_all(Page(page(tmp_path, *parts)))
    except BlockFailed:
        return False
    return True


@pytest.mark.parametrize(
    ("printed", "passes"),
    [
        ("loss 0.153, accuracy 0.998\n", True),
        ("loss 0.1534, accuracy 0.9981\n", True),  # printed with more digits than shown
        ("loss 0.154, accuracy 0.998\n", True),  # one unit of the last digit shown
        ("loss 0.155, accuracy 0.998\n", False),  # two units off
        ("loss 0.153, accuracy 0.998 \n", False),  # the text around the numbers is exact
        ("loss 0.153, acc 0.998\n", False),
    ],
)
def test_numbers_are_compared_to_the_precision_they_are_written_with(tmp_path, printed, passes):
    assert check(tmp_path, "loss 0.153, accuracy 0.998\n", printed, "numbers") is passes


def test_without_an_option_an_output_is_compared_exactly(tmp_path):
    assert check(tmp_path, "loss 0.153\n", "loss 0.153\n")
    assert not check(tmp_path, "loss 0.153\n", "loss 0.1534\n")


@pytest.mark.parametrize(
    ("printed", "passes"),
    [("loss 0.0312 after 300 steps\n", True), ("loss 0.0327 after 300 steps\n", True)]
    + [("loss 0.0331 after 300 steps\n", False), ("loss 0.0312 after 301 steps\n", False)],
)
def test_a_tolerance_bounds_each_number_and_counts_stay_exact(tmp_path, printed, passes):
    shown = "loss 0.0312 after 300 steps\n"
    assert check(tmp_path, shown, printed, "tolerance=0.05") is passes


@pytest.mark.parametrize(
    ("printed", "passes"),
    [
        ("no cache: 41.3 ms, cache: 2.1 ms (19.7x)\n", True),  # another machine's numbers
        ("no cache: 12 ms, cache: 0.75 ms (16x)\n", True),
        ("no cache: 41.3 s, cache: 2.1 ms (19.7x)\n", False),  # another unit
        ("cache: 2.1 ms, no cache: 41.3 ms (19.7x)\n", False),  # the words moved
        ("no cache: 41.3 ms\n", False),
    ],
)
def test_a_measured_output_is_checked_by_its_form_only(tmp_path, printed, passes):
    shown = "no cache: 38.0 ms, cache: 1.9 ms (20.0x)\n"
    assert check(tmp_path, shown, printed, 'measured="1 CPU thread, torch 2.13.0"') is passes


@pytest.mark.parametrize("option", ["approximately", "tolerance=5%", "measured", "numbers=3"])
def test_an_output_option_the_dialect_does_not_know_is_an_error(tmp_path, option):
    from qkvsite.dialect import DialectError

    with pytest.raises(DialectError, match="an output fence is"):
        _ = Page(page(tmp_path, printing("1\n"), fenced("1\n", option))).blocks


def test_updating_a_measured_output_names_the_machine_it_was_measured_on(tmp_path):
    path = page(tmp_path, printing("took 3.2 ms\n"), fenced("took 1.0 ms\n", 'measured="old"'))
    pytest_plugin.update_output(path, 0, "took 3.2 ms\n")
    fence = Page(path).blocks[0].output
    assert fence.body == "took 3.2 ms\n"
    assert fence.comparison["measured"] == machine.measured_on(machine.environment())
    assert f"torch {torch.__version__}" in fence.comparison["measured"]


def test_a_measured_output_is_titled_with_where_it_was_measured_in_both_languages(tmp_path):
    from qkvsite.hooks.sources import add_titles

    option = 'measured="1 CPU thread, torch 2.13.0"'
    for lang, words in {"en": "your numbers will differ", "zh": "你那里的数字会不同"}.items():
        path = tmp_path / f"page.{lang}.md"
        shown = fenced("1 ms\n", option)
        path.write_text(f"{printing('1 ms')}\n\n{shown}\n", encoding="utf-8")
        titled = add_titles(Page(path))
        assert "1 CPU thread, torch 2.13.0" in titled and words in titled
