"""Words presented as the source article's are its words, verbatim.

How a page quotes the article (the one way; nothing else on a page is read as a quotation of it):

- zh: a blockquote line ``> 原文：「…」``, or with where it stands, ``> 原文（Q9）：「…」``.
  The words between 「 and 」 must occur in ``../shared/source/article.zh.txt``; a ``……``
  inside them leaves words out, and each piece must occur, in order. 「」 mark nothing else
  on the reference pages.
- en: a blockquote line ``> The article, translated: "…" <!-- 原文：「…」 -->`` (or
  ``> The article (Q9), translated: …``): the English is a translation, and the comment holds the
  Chinese it translates, which must be verbatim in the article and quoted the same way, in the same
  order, on the zh edition of the page.

Compared after normalising whitespace (all of it dropped), full- and half-width forms (NFKC,
and “”「」 read as "), and Markdown code-span backticks (markup, not words). A quote the
article does not hold fails with the page, the line and the nearest sentence of the article
(difflib).
"""

import difflib
import re
import unicodedata

import pytest

from qkvsite.config import DOCS, ROOT

ARTICLE = ROOT.parent / "shared" / "source" / "article.zh.txt"

ZH_QUOTE = re.compile(r"^\s*> 原文(?:（[^）]*）)?：「(?P<zh>.+)」\s*$")
EN_QUOTE = re.compile(
    r'^\s*> The article(?: \([^)]*\))?, translated: "(?P<en>.+)"'
    r"\s*<!-- 原文：「(?P<zh>.+)」 -->\s*$"
)
# The reference pages, where the article is quoted most: 「」 and prose quotations are guarded
# there.
REFERENCE = [
    "faq",
    "faq-concepts",
    "faq-matrices",
    "faq-heads",
    "faq-engineering",
    "corrections",
    "bug-gallery",
    "glossary",
]
# A quotation of the article in running prose, not on a marked line.
ZH_UNMARKED = re.compile(r"原文(?:说|写|称|给出|里|中|的[^。！？]{0,12}?)[^。！？]*?“")
EN_UNMARKED = re.compile(
    r"[Tt]he article(?:'s [a-z ]+)? (?:says|writes|calls|claims|puts|gives)[^.!?]*?\""
)

# A box (a "Common misconception" note) that opens with a quotation.
OPENS_BOX = re.compile(r'^ {4}[“"]')

PAGES = sorted(p.name.split(".")[0] for p in DOCS.glob("*.zh.md"))


def norm(text):
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[“”「」『』]", '"', text).replace("‘", "'").replace("’", "'").replace("`", "")
    return re.sub(r"\s+", "", text)


def article():
    if not ARTICLE.exists():
        pytest.skip(f"the source article is not here ({ARTICLE.name})")
    return ARTICLE.read_text(encoding="utf-8")


def nearest(quote, source):
    sentences = [s.strip() for s in re.split(r"(?<=[。！？；\n])", source) if s.strip()]
    target = norm(quote)
    return max(sentences, key=lambda s: difflib.SequenceMatcher(None, target, norm(s)).ratio())


def verbatim(quote, source):
    """Each piece of the quote between ``……`` occurs in the article, in order."""
    at, text = 0, norm(source)
    for piece in re.split(r"…+", quote):
        piece = norm(piece)
        if not piece:
            continue
        at = text.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    return True


def lines(name, lang):
    return (DOCS / f"{name}.{lang}.md").read_text(encoding="utf-8").splitlines()


def quotes(name, lang):
    pattern = ZH_QUOTE if lang == "zh" else EN_QUOTE
    return [
        (n, m["zh"]) for n, line in enumerate(lines(name, lang), 1) if (m := pattern.match(line))
    ]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("name", PAGES)
def test_every_quotation_of_the_article_is_verbatim(name, lang):
    source = article()
    wrong = [
        f"docs/{name}.{lang}.md:{n}: 「{zh}」 is not in the article; nearest: {nearest(zh, source)}"
        for n, zh in quotes(name, lang)
        if not verbatim(zh, source)
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", PAGES)
def test_every_english_quotation_translates_the_chinese_quotation_of_the_zh_edition(name):
    zh = [q for _, q in quotes(name, "zh")]
    en = [q for _, q in quotes(name, "en")]
    assert en == zh, f"docs/{name}: the en quotes must name the zh edition's quotes, in order"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("name", REFERENCE)
def test_the_reference_pages_quote_the_article_only_on_marked_lines(name, lang):
    marked = ZH_QUOTE if lang == "zh" else EN_QUOTE
    loose = []
    for n, line in enumerate(lines(name, lang), 1):
        if marked.match(line):
            continue
        if "「" in line or "」" in line or "<!-- 原文" in line or "translated:" in line:
            loose.append(f"docs/{name}.{lang}.md:{n}: {line.strip()}")
        elif (ZH_UNMARKED if lang == "zh" else EN_UNMARKED).search(line) or OPENS_BOX.match(line):
            loose.append(f"docs/{name}.{lang}.md:{n}: {line.strip()}")
    assert not loose, (
        "quote the article on a marked line (see this test's docstring):\n" + "\n".join(loose)
    )


def test_a_misquote_fails_and_names_the_nearest_sentence():
    source = article()
    assert verbatim("Q 来自 Decoder、X 来自 Encoder 的输出", source)
    assert verbatim("只是借用了“注意力”这个比喻……没有直接的神经科学对应关系", source)
    assert not verbatim("Q 来自解码器、X 来自编码器的输出", source)
    assert "Cross-Attention" in nearest("Q 来自解码器、X 来自编码器的输出", source)
