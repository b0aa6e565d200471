"""The site's one notation (the glossary's table) is kept: no page, snippet comment or figure uses a
retired symbol.

Retired: d_head and E/H for the head width (it is d_k), n for the sequence length (it is L, or
L_q and L_k), h for the number of heads (it is H), S for anything but the scores (the number of
keys is L_k), E for the model width (it is d_model; `embed_dim` stays PyTorch's argument name).
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The glossary names the retired forms in its notation table, so it is the one page left out.
PAGES = sorted(p for p in (ROOT / "docs").glob("*.md") if not p.name.startswith("glossary."))
CODE = sorted((ROOT / "snippets").rglob("*.py")) + sorted(
    (ROOT / "qkvsite" / "figures").glob("*.py")
)

# Anywhere: prose, formulas, comments, labels.
ANYWHERE = {
    "d_head (the head width is d_k)": re.compile(r"\bd_\{?(\\(text|mathrm)\{)?head\b|\bd_head\b"),
    "E/H (the head width is d_k)": re.compile(r"\bE\s*/\s*H\b|\\frac\{E\}\{H\}"),
    "n_q, n_kv (the lengths are L_q and L_k)": re.compile(r"\bn_\{?(q|k|kv)\b"),
    "L, S for queries and keys (the lengths are L_q and L_k)": re.compile(
        r"\b(L|N)\s*(\\neq|≠|!=|=)\s*S\b"
    ),
}
# A bare symbol inside a formula ($...$) or a shape tuple, e.g. `(n, d_k)`: letters that are not
# part of a word, a command (\sin) or a subscript (W_h).
_BARE = r"(?<![\\\w{{]){}(?![\w])"
IN_FORMULAS = {
    "n (the sequence length is L)": re.compile(_BARE.format("n")),
    "h (the number of heads is H)": re.compile(_BARE.format("h")),
    "E (the model width is d_model)": re.compile(_BARE.format("E")),
}
_FORMULA = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.DOTALL)
# (a, b, ...), tuple of sizes
_SHAPE = re.compile(r"\((?:[\w\s\\{}*+/·.-]+,\s*)+[\w\s\\{}*+/·.-]+\)")


def _formulas(text: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _FORMULA.finditer(text)] + _SHAPE.findall(text)


def _comments_and_strings(source: str) -> str:
    """Comments, docstrings and string literals of a Python file: where its prose and labels are."""
    import io
    import tokenize

    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return "\n".join(t.string for t in tokens if t.type in (tokenize.COMMENT, tokenize.STRING))


def _retired(text: str) -> list[str]:
    found = [
        f"{name}: {m.group(0)!r}" for name, rule in ANYWHERE.items() for m in rule.finditer(text)
    ]
    for formula in _formulas(text):
        found += [
            f"{name}: {formula!r}" for name, rule in IN_FORMULAS.items() if rule.search(formula)
        ]
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_uses_no_retired_symbol(page):
    # code is checked below
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert not _retired(text), (
        f"{page.name} uses retired notation (see the glossary's notation table)"
    )


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_snippet_comments_and_figure_labels_use_no_retired_symbol(path):
    assert not _retired(_comments_and_strings(path.read_text(encoding="utf-8"))), path.name


@pytest.mark.parametrize(
    "symbol",
    ["d_head", "E / H", "n_q", "L \\neq S", "$(n, d)$", "$h = 8$", "$E$", "(B, h, n, d_k)"],
)
def test_each_retired_form_is_caught(symbol):
    assert _retired(symbol), symbol


@pytest.mark.parametrize(
    "text",
    [
        "$d_k = d_{\\text{model}} / H$",
        "$\\sin(x)$",
        "$W_h$",
        "(B, H, L, d_k)",
        "$\\mathrm{head}_i$",
        "`embed_dim`",
        "$L_q \\times L_k$",
        "the word hen",
    ],
)
def test_the_notation_itself_is_allowed(text):
    assert not _retired(text), text
