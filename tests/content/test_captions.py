"""A figure's caption and alt text state only what the values it is drawn from show.

The rule: every number, every bound and every trend in a caption or an alt text lies inside a
phrase that the figure's module states from the example's values, with ``@says("<figure>")``
beside its ``@figure`` (``qkvsite.figures.Says``):

- a number in a ``Says`` phrase is an f-string field of a value, never a digit typed in the
  string: when the example changes, the phrase changes, and the page no longer matches it;
- a phrase with a bound or a trend (the words of ``TREND``) carries ``holds``, worked out from the
  values (``holds=True`` typed in is refused): a test run re-measures a measured figure, so it
  states only what holds on the machine that draws it;
- each phrase is in the caption or the alt text of its edition, and nothing else there is a
  number or a trend.

References are not claims: "Figure 8-3", "chapter 7", "section 9.2", "Step 2", "Table 3", "Q12",
a link's target. A digit inside a name (``t1``, ``W_0``, ``FlashAttention-2``) is not a number.
"""

from __future__ import annotations

import ast
import re

import pytest

from qkvsite.config import DOCS, ROOT
from qkvsite.dialect import Page
from qkvsite.figure_cache import declared
from qkvsite.figures import SAYS, Says, load_all, run_example

CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
REFERENCE = re.compile(
    r"^Figure [\w-]+\.|^图 [\w-]+ |\]\([^)]*\)|\b[Cc]hapter \d+|第 ?\d+ ?章"
    r"|\b[Ss]ection \d+(?:\.\d+)?|\d+(?:\.\d+)? ?节|\b[Ss]tep \d+|第 ?\d+ ?步"
    r"|\bTable \d+|表 ?\d+|\bQ\d+"
)
NUMBER = re.compile(r"(?<![\w.^\\])(?<![A-Za-z]-)\d+(?:\.\d+)?")
# words that state how values compare or change; where they stand, "above"/"below"/"上面" are
# places in the figure, not bounds, and are not read
TREND = {
    "en": re.compile(
        r"\b(?:grow\w*|rises?|rising|fall\w*|increas\w*|decreas\w*|flat|constant|stays?|staying"
        r"|approach\w*|tends?|linear\w*|quadratic\w*|square of|symmetric|coincide|faster|slower"
        r"|slowly|monoton\w*|ceiling|at most|at least|higher|lower(?![ -](?:right|left))"
        r"|close to|near|nearly|almost|far|narrower|wider|smaller|larger|closer|lighter|darker"
        r"|much|more|less)\b"
    ),
    "zh": re.compile(
        r"增长|增大|增加|上升|升高|下降|降低|减小|减少|变小|变大|变窄|变宽|平坦|不变|保持|趋于|趋近"
        r"|接近|逼近|线性|平方|二次|对称|重合|更快|更慢|缓慢|单调|上限|至多|至少|不超过|不低于|高于"
        r"|低于|超过|几乎|远低于|远高于|左右|约|近乎|附近|更多|更少|更小|更大|更浅|更深|窄得多"
    ),
}


def norm(text: str) -> str:
    """Whitespace collapsed, none left between two Chinese characters (a source line break)."""
    text = " ".join(text.split())
    return re.sub(rf"(?<=[{CJK}])\s+(?=[{CJK}])", "", text)


def unstated(text: str, lang: str) -> list[str]:
    """The numbers and trend words of ``text`` (references aside)."""
    text = REFERENCE.sub(" ", text)
    return [m.group() for m in NUMBER.finditer(text)] + [
        m.group() for m in TREND[lang].finditer(text)
    ]


def check(name: str, texts: dict[str, list[str]], stated: list[Says]) -> list[str]:
    """What is wrong with figure ``name``'s captions and alt texts (``texts``: per edition, each
    caption and alt text) against the phrases ``stated`` from its values."""
    problems = []
    for each in stated:
        if each.holds is False:
            problems.append(f"{name}: the values do not show {each.en!r}")
        for lang in texts:
            phrase = norm(getattr(each, lang))
            if each.holds is None and TREND[lang].search(phrase):
                problems.append(f"{name}: {phrase!r} states a bound or a trend: give it holds=")
            if not any(phrase in text for text in texts[lang]):
                problems.append(f"{name} ({lang}): no caption or alt text says {phrase!r}")
    for lang, found in texts.items():
        phrases = sorted((norm(getattr(s, lang)) for s in stated), key=len, reverse=True)
        for text in found:
            rest = text
            for phrase in phrases:
                rest = rest.replace(phrase, " ¦ ")
            if left := unstated(rest, lang):
                problems.append(
                    f"{name} ({lang}): {', '.join(map(repr, left))} in {text!r} is not stated from"
                    " the figure's values: add a Says to its @says, or drop the words"
                )
    return problems


def page_texts() -> dict[str, dict[str, list[str]]]:
    """figure name -> language -> every caption and alt text it has on the pages."""
    found: dict[str, dict[str, list[str]]] = {}
    for path in sorted(DOCS.glob("*.md")):
        page = Page(path)
        for figure in page.figures:
            texts = found.setdefault(figure.name, {"zh": [], "en": []})[page.lang]
            texts += [norm(figure.alt), norm(figure.caption)]
    return found


TEXTS = page_texts()


# each runs its figure's example (``--chapter`` keeps those of one chapter: tests/conftest.py); a
# figure no module declares fails below, not at collection
EXAMPLES = {name: example for name, (example, *_) in declared().items()}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.example(EXAMPLES.get(name, "")))
        for name in sorted(TEXTS)
    ],
)
def test_every_number_and_trend_in_a_caption_is_stated_from_the_figures_values(name):
    load_all()
    states = SAYS.get(name)
    stated = states(run_example(declared()[name][0])) if states else []
    problems = check(name, TEXTS[name], stated)
    assert not problems, "\n".join(problems)


def test_every_described_caption_is_a_figure_on_a_page():
    load_all()
    assert set(SAYS) <= set(TEXTS), f"@says of no figure on a page: {set(SAYS) - set(TEXTS)}"


def _says_calls():
    for module in sorted((ROOT / "figures").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text("utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Says":
                yield module.name, node


def test_a_says_phrase_takes_its_numbers_from_values_and_checks_its_trends():
    problems = []
    for module, call in _says_calls():
        where = f"figures/{module}:{call.lineno}"
        for arg in call.args:
            parts = [arg] if isinstance(arg, ast.Constant) else getattr(arg, "values", [])
            for part in parts:
                if isinstance(part, ast.Constant) and NUMBER.search(str(part.value)):
                    problems.append(f"{where}: a number typed into {part.value!r}: use a value")
        for keyword in call.keywords:
            if keyword.arg == "holds" and isinstance(keyword.value, ast.Constant):
                problems.append(
                    f"{where}: holds={keyword.value.value!r} is typed in, not worked out"
                )
    assert not problems, "\n".join(problems)


# The rule itself, on made-up captions: it must catch a false number, an unchecked trend, a trend
# the values do not show and a phrase the page lost.
CAPTION = {
    "en": ["The same 3 queries and 7 keys; the ratio grows with L."],
    "zh": ["3 个查询、7 个键；比值随 L 增长。"],
}


def test_the_caption_rule_passes_a_caption_stated_from_values():
    stated = [
        Says(f"{3} queries and {7} keys", f"{3} 个查询、{7} 个键"),
        Says("the ratio grows with L", "比值随 L 增长", holds=True),
    ]
    assert check("made-up", CAPTION, stated) == []


@pytest.mark.parametrize(
    "stated, complaint",
    [
        (
            [Says(f"{4} queries and {7} keys", f"{4} 个查询、{7} 个键")],
            "no caption or alt text says",
        ),
        ([Says(f"{3} queries and {7} keys", f"{3} 个查询、{7} 个键")], "'grows'"),
        (
            [
                Says(f"{3} queries and {7} keys", f"{3} 个查询、{7} 个键"),
                Says("the ratio grows with L", "比值随 L 增长"),
            ],
            "give it holds=",
        ),
        (
            [
                Says(f"{3} queries and {7} keys", f"{3} 个查询、{7} 个键"),
                Says("the ratio grows with L", "比值随 L 增长", holds=False),
            ],
            "the values do not show",
        ),
        ([], "'3', '7', 'grows'"),
    ],
    ids=["wrong number", "unstated trend", "unchecked trend", "false trend", "nothing stated"],
)
def test_the_caption_rule_fails_a_caption_the_values_do_not_back(stated, complaint):
    assert complaint in "\n".join(check("made-up", CAPTION, stated))
