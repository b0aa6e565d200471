"""Measures the English prose of the built pages: sentence length, and sentences that talk about the
proof.

Only body text counts: paragraphs and list items of the article, not admonitions, collapsed
boxes, figures, tables or code. Each formula and each piece of inline code counts as one word.

    .venv/bin/python -m tests.content.prose [SITE_DIR]     # a table per page, after `make build`
"""

import functools
import re
import sys
from pathlib import Path

from bs4 import BeautifulSoup

LESSONS = [
    "dot-product",
    "qkv",
    "scaled-dot-product",
    "multi-head",
    "shapes",
    "positional-encoding",
    "learned-attention",
    "decoding",
    "fast-attention",
    "faq",
    "faq-concepts",
    "faq-matrices",
    "faq-heads",
    "faq-engineering",
    "bug-gallery",
]
LONG = 35

# Abbreviations whose full stop does not end a sentence.
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|ch|Fig|fig|Eq|eq|No|approx|al)\.$")
_END = re.compile(r"(?<=[.!?])[\"”’)]*\s+(?=[\"“‘(]?[A-Z0-9`$])")

# A sentence talks about the proof when it speaks of the site's tests, its build, its records or
# this machine.
PROOF_TALK = re.compile(
    r"\b(the tests?|our tests?|site's tests|tests (assert|check|run|repeat|show|compare)|test "
    r"suite|pytest"
    r"|the build|when the site is built|verification records?|records? (show|of)|CI"
    r"|this (machine|CPU|computer)|we (observed|measured)|(has|have) not (been "
    r")?(measured|checked|run))\b",
    re.IGNORECASE,
)
# ...but not when "test" is the reader's word: a test set, test accuracy.
_NOT_PROOF = re.compile(
    r"\bthe test (set|data|sequences?|accuracy|loss|example)s?\b", re.IGNORECASE
)


def body_text(html: str) -> list[str]:
    """The article's body paragraphs and list items, formulas and inline code as one word each."""
    article = BeautifulSoup(html, "html.parser").find("article")
    references = article.find(
        lambda tag: tag.name == "h2" and tag.get_text().startswith("References")
    )
    while references is not None and references.find_next_sibling() is not None:
        following = references.find_next_sibling()
        if following.name == "h2":
            break
        following.decompose()
    for skipped in article.select(
        ".admonition, details, figure, table, .highlight, pre, .md-source-file, .headerlink, "
        ".md-content__button, h1, h2, h3, h4"
    ):
        skipped.decompose()
    for atom in article.select("math, code, .arithmatex"):
        atom.replace_with(" X ")
    texts = []
    for block in article.find_all(["p", "li"]):
        if block.name == "li" and block.find("p"):
            continue  # its paragraphs are counted themselves
        text = " ".join(block.get_text(" ").split())
        if text:
            texts.append(text)
    return texts


def article_words(html: str) -> int:
    """The words of everything a reader can read in a page's article but code, outputs, formulas
    and figures: paragraphs, lists, tables, headings and every box, folded or not."""
    article = BeautifulSoup(html, "html.parser").find("article")
    for skipped in article.select(
        "figure, .highlight, pre, code, math, .arithmatex, .md-source-file, .headerlink, "
        ".md-content__button, .qkv-notebook-links, script, style"
    ):
        skipped.decompose()
    return words(article.get_text(" "))


def sentences(text: str) -> list[str]:
    parts, current = [], ""
    for piece in _END.split(text):
        current = f"{current} {piece}".strip() if current else piece
        if not _ABBREVIATIONS.search(current):
            parts.append(current)
            current = ""
    if current:
        parts.append(current)
    return parts


def words(sentence: str) -> int:
    return len([w for w in sentence.split() if re.search(r"\w", w)])


@functools.cache  # three tests read every lesson: each page is parsed once
def page_sentences(site: Path, page: str) -> tuple[str, ...]:
    html = (site / "en" / page / "index.html").read_text(encoding="utf-8")
    return tuple(s for text in body_text(html) for s in sentences(text))


def talks_about_proof(sentence: str) -> bool:
    return bool(PROOF_TALK.search(_NOT_PROOF.sub("", sentence)))


def measure(site: Path) -> dict[str, dict]:
    table = {}
    for page in LESSONS:
        found = page_sentences(site, page)
        lengths = [words(s) for s in found]
        table[page] = {
            "sentences": len(found),
            "mean": sum(lengths) / len(lengths),
            "long": sum(n > LONG for n in lengths) / len(lengths),
            "proof": [s for s in found if talks_about_proof(s)],
        }
    return table


def main(site: Path) -> None:
    table = measure(site)
    everything = [words(s) for page in LESSONS for s in page_sentences(site, page)]
    print(f"{'page':22} {'sentences':>9} {'mean':>6} {'>35':>6} {'proof':>6}")
    for page, row in table.items():
        print(
            f"{page:22} {row['sentences']:9} {row['mean']:6.1f} {row['long']:6.1%} "
            f"{len(row['proof']):6}"
        )
    print(
        f"{'all':22} {len(everything):9} {sum(everything) / len(everything):6.1f} "
        f"{sum(n > LONG for n in everything) / len(everything):6.1%} "
        f"{sum(len(row['proof']) for row in table.values()):6}"
    )
    if "-v" in sys.argv:
        for page, row in table.items():
            for s in row["proof"]:
                print(f"[{page}] {s}")


if __name__ == "__main__":
    main(Path(next((a for a in sys.argv[1:] if not a.startswith("-")), "site")))
