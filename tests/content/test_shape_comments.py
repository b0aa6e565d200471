"""Shape comments in snippets/ are checked: each one is run and compared with the tensor's real
shape.

The convention (CONTRIBUTING.md): a comment that starts with a shape, at the end of the line that
assigns a tensor, states that tensor's shape, in the glossary's symbols or in numbers: ``Q =
w_q(X)  # (L, d_k)``, each of several with ``# 3 × (B, L, d_model)``. After an arrow the shape is
the result's: ``S = Q @ K.T  # (L, d_k) @ (d_k, L) -> (L, L)``. A symbol means one size in one
call of a function (or one run of a script): the code's own variable of that name if it has one
(or PyTorch's name for it: ``num_heads`` or ``self.num_heads`` for H, ``embed_dim`` for d_model,
``head_dim`` for d_k), or else the size it stood for in the first comment that used it. So every
symbol of the first comment that uses it must be a variable of the code, or a number: then
swapping two symbols in any comment is caught.
"""

import ast
import contextlib
import functools
import io
import re
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SYMBOLS = {"B", "H", "L", "L_q", "L_k", "d_model", "d_k", "d_v", "d", "G"}  # the glossary's sizes
# where the code keeps a size under PyTorch's name for it: a module's attribute, or a function's
# argument
ALIASES = {
    "H": ["num_heads", "self.num_heads", "self.H"],
    "d_model": ["embed_dim", "self.embed_dim", "self.d_model"],
    "d_k": ["head_dim", "self.head_dim", "self.d_k"],
    "G": ["self.G", "num_kv_heads"],
    "L": ["length"],
}
SHAPE = re.compile(r"#\s*(?:\d+ × )?(?:.*->\s*)?(\((?:[\w\s·*+/-]+,\s*)*[\w\s·*+/-]+,?\))")


def shape_comment(line: str) -> str | None:
    """The shape a line's comment states: the comment's first tuple, or the one after its last
    arrow."""
    comment = line[line.index("#") :] if "#" in line else ""
    if not re.match(r"#\s*(\d+ × )?\(", comment) and "->" not in comment:
        return None
    match = SHAPE.match(comment)
    return match[1] if match else None


def sizes(shape: str) -> list[str]:
    return [part.strip() for part in shape.strip("()").split(",") if part.strip()]


class ShapeMismatch(AssertionError):
    pass


class Checker:
    """Called after each commented assignment: compares the tensor's shape with its comment."""

    def __init__(self, name: str):
        self.name = name  # the file, as messages name it
        self.checked = 0
        # each check: line, tensor's shape, the variables, its call's sizes, those bound before it
        self.seen = []

    def __call__(
        self, value, shape: str, lineno: int, names: dict, bound: dict, outer: dict, reads: tuple
    ) -> None:
        """``names``: the variables where the tensor was assigned, and of ``outer`` (the script's)
        those that the function reads; ``bound``: the sizes its comments gave there."""
        if not isinstance(value, torch.Tensor):
            return
        names = {**{name: outer[name] for name in reads if name in outer}, **names}
        self.seen.append((lineno, value.shape, names, bound, dict(bound)))
        self.check(value.shape, shape, lineno, names, bound)

    def check(self, real_shape, shape: str, lineno: int, names: dict, bound: dict) -> None:
        where = f"{self.name}:{lineno}: comment {shape}, real shape {tuple(real_shape)}"
        parts = sizes(shape)
        if len(parts) != len(real_shape):
            raise ShapeMismatch(where)
        for part, real in zip(parts, real_shape, strict=True):
            expected = self.size(part, names, bound, where)
            if expected is None:
                bound[part] = real
            elif expected != real:
                raise ShapeMismatch(where)
        self.checked += 1

    @staticmethod
    def size(part: str, names: dict, bound: dict, where: str) -> int | None:
        """The size a part of a comment stands for; None for a symbol not bound yet in this
        frame."""
        if part.isdigit():
            return int(part)
        if part in bound:
            return bound[part]
        if part in SYMBOLS:
            for name in [part, *ALIASES.get(part, [])]:
                owner, _, attribute = name.rpartition(".")
                value = getattr(names.get(owner), attribute, None) if owner else names.get(name)
                if isinstance(value, int):
                    return value
            return None
        expression = part.replace("·", "*")  # H·d_k
        if not re.fullmatch(r"[\w\s*+/-]+", expression):
            raise ShapeMismatch(f"{where}: cannot read {part!r}")
        values = {n: bound.get(n, names.get(n)) for n in re.findall(r"[A-Za-z_]\w*", expression)}
        if not all(isinstance(v, int) for v in values.values()):
            raise ShapeMismatch(
                f"{where}: {part!r} uses a size that neither the code nor an earlier comment gives"
            )
        return int(eval(expression, {}, values))  # noqa: S307 (sizes and arithmetic only, matched above)


# in every function call and the script: symbol -> size, as its comments bound them
SIZES = "__shape_sizes__"


def instrument(source: str) -> tuple[ast.Module, list[tuple[int, str]]]:
    """The script with a call of the checker after every assignment whose line has a shape comment,
    and those comments (line, shape). ``Q, K, V = ...  # 3 × (B, L, d_model)`` checks each of the
    three.

    Each function (and the script itself) starts with an empty ``__shape_sizes__``: a symbol
    means one size in one call."""
    lines, checked = source.splitlines(), []
    fresh = ast.parse(f"{SIZES} = {{}}").body[0]

    def body(statements: list, scope: bool = False, reads: tuple = ()) -> list:
        out = [ast.copy_location(fresh, statements[0])] if scope else []
        for statement in statements:
            is_scope = isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    new_scope = is_scope and field == "body"
                    used = tuple(
                        sorted({n.id for n in ast.walk(statement) if isinstance(n, ast.Name)})
                    )
                    setattr(
                        statement,
                        field,
                        body(inner, scope=new_scope, reads=used if new_scope else reads),
                    )
            for handler in getattr(statement, "handlers", []):
                handler.body = body(handler.body, reads=reads)
            out.append(statement)
            shape = shape_comment(lines[statement.end_lineno - 1])
            if not (isinstance(statement, ast.Assign | ast.AnnAssign) and shape):
                continue
            target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
            each = [target]
            if isinstance(target, ast.Tuple | ast.List):
                line = lines[statement.end_lineno - 1]
                if not re.search(rf"#\s*{len(target.elts)} × \(", line):
                    continue  # several values, one shape: not "N × (shape)", so not a shape of each
                each = target.elts
            checked.append((statement.end_lineno, shape))
            for value in each:
                where = (
                    f"{shape!r}, {statement.end_lineno}, locals(), {SIZES}, globals(), {reads!r}"
                )
                call = f"__check_shape__({ast.unparse(value)}, {where})"
                out.append(ast.copy_location(ast.parse(call).body[0], statement))
        return out

    module = ast.parse(source)
    module.body = body(module.body, scope=True)
    return ast.fix_missing_locations(module), checked


def run_checked(path: Path, name: str) -> tuple[Checker, list[tuple[int, str]]]:
    """Run a snippet as a script with its shape comments checked: the checker and the comments it
    checks."""
    tree, comments = instrument(path.read_text(encoding="utf-8"))
    checker = Checker(name)
    namespace = {"__name__": "__main__", "__file__": str(path), "__check_shape__": checker}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(tree, str(path), "exec"), namespace)  # noqa: S102 (the repository's own snippet)
    return checker, comments


@functools.cache
def snippet_run(path: Path) -> tuple[Checker, list[tuple[int, str]]]:
    """A snippet's checked run, once for the two tests below."""
    return run_checked(path, str(path.relative_to(ROOT)))


def commented(path: Path) -> bool:
    return any(shape_comment(line) for line in path.read_text(encoding="utf-8").splitlines())


SNIPPETS = sorted(p for p in (ROOT / "snippets").rglob("*.py") if commented(p))


def run_of(path: Path):
    """A snippet as the parameter of a check that runs it: its ``example`` mark (``--chapter``
    keeps the checks of one chapter's examples: tests/conftest.py)."""
    name = str(path.relative_to(ROOT / "snippets"))
    return pytest.param(path, marks=pytest.mark.example(name), id=name)


RUNS = [run_of(path) for path in SNIPPETS]


@pytest.mark.parametrize("path", RUNS)
def test_every_shape_comment_states_the_tensors_real_shape(path):
    checker, comments = snippet_run(path)
    assert checker.checked or not comments, (
        f"{path}: none of its {len(comments)} shape comments was reached"
    )


@pytest.mark.parametrize(
    "line, shape",
    [
        ("Q = w_q(X)  # (L, d_k)", "(L, d_k)"),
        ("S = Q @ K.T  # (L, d_k) @ (d_k, L) -> (L, L)", "(L, L)"),
        ("W = p(H * d_k, d_model)  # (H·d_k, d_model) = (d_model, d_model)", "(H·d_k, d_model)"),
        ("x = f(y)  # the input, (B, L, d_model)", None),
        ("n = 3  # three tokens", None),
    ],
)
def test_a_shape_comment_is_read_as_the_convention_says(line, shape):
    assert shape_comment(line) == shape


@pytest.mark.parametrize(
    "comment", ["(L, B, d_model)", "(B, d_model, L)", "(B, L)", "(B, L, d_model, 1)", "(2, 5, 13)"]
)
def test_a_wrong_shape_comment_fails_naming_file_line_comment_and_real_shape(tmp_path, comment):
    script = tmp_path / "swap.py"
    script.write_text(
        f"import torch\nB, L, d_model = 2, 5, 12\nx = torch.zeros(B, L, d_model)  # {comment}\n"
    )
    with pytest.raises(
        ShapeMismatch, match=re.escape(f"swap.py:3: comment {comment}, real shape (2, 5, 12)")
    ):
        run_checked(script, "swap.py")


def test_a_symbol_first_bound_by_a_comment_keeps_its_size_in_that_call(tmp_path):
    script = tmp_path / "bind.py"
    script.write_text(
        "import torch\ndef f(x):\n    y = x * 2  # (B, L)\n    z = y.T  # (B, L)\nf(torch.zeros(2, "
        "3))\n"
    )
    with pytest.raises(
        ShapeMismatch, match=re.escape("bind.py:4: comment (B, L), real shape (3, 2)")
    ):
        run_checked(script, "bind.py")


def swaps(shape: str) -> list[str]:
    """The shape with two of its different symbols swapped, for every such pair."""
    parts = sizes(shape)
    # symbols, not numbers or H·d_k
    symbols = sorted({p for p in parts if re.fullmatch(r"[A-Za-z_]\w*", p)})
    out = []
    for i, a in enumerate(symbols):
        for b in symbols[i + 1 :]:
            swapped = [b if p == a else a if p == b else p for p in parts]
            out.append("(" + ", ".join(swapped) + ")")
    return out


def caught(checker: Checker, lineno: int, swapped: str, lines: list[str]) -> bool:
    """Whether the run fails with the comment of line ``lineno`` swapped. The code runs as before,
    so in each call that reaches the line, from its first check there, the comments of that call (a
    symbol means one size in one call) are checked again against what the run saw, with the line's
    comment swapped."""
    done = set()
    for index, (line, _, _, frame, before) in enumerate(checker.seen):
        if line != lineno or id(frame) in done:
            continue
        done.add(id(frame))
        bound = dict(before)
        try:
            for later, real_shape, names, same_frame, _ in checker.seen[index:]:
                if same_frame is frame:
                    shape = swapped if later == lineno else shape_comment(lines[later - 1])
                    checker.check(real_shape, shape, later, names, bound)
        except ShapeMismatch:
            return True
    return False


@pytest.mark.parametrize("path", RUNS)
def test_swapping_two_symbols_in_any_shape_comment_of_a_snippet_is_caught(path):
    """Each comment, with two of its symbols swapped, must fail the check: its symbols are tied to
    real sizes (the code's variables, or an earlier comment), and those sizes differ. The script
    runs once (``caught``)."""
    checker, comments = snippet_run(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    missed = [
        f"{path.relative_to(ROOT)}:{lineno}: {shape} -> {swapped} passes"
        for lineno, shape in comments
        for swapped in swaps(shape)
        if not caught(checker, lineno, swapped, lines)
    ]
    assert not missed, "\n".join(missed)
