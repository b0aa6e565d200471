"""Search: one index per language, formulas as text, notebook pages as one entry each.

1. One index per language. Material writes one for the whole site (an English query listed
   Chinese pages); after the build it is split: ``search/search_index.json`` for Chinese,
   ``en/search/search_index.json`` for English (where English pages look:
   ``qkvsite.hooks.material_fixes``). Notebook pages, which repeat their chapter's text, get one
   entry each (title and description), and the chapters' reference lists
   (``config.REFERENCES_HEADING``) are left out: paper titles would rank first for the words the
   chapters explain.
2. Formulas are indexed as text: the page's MathML carries its TeX (``qkvsite.hooks.math``), and
   the index's text is written back to plain formulas, so that a result reads "divide by √dₖ",
   not "divide by dk".
3. jieba, which Material's search uses to cut Chinese into words, logs its dictionary's loading
   (four lines on stderr in every build): only its warnings are shown.
"""

import json
import logging
from pathlib import Path

from qkvsite import config as site
from qkvsite.dialect import Page
from qkvsite.hooks.math import plain
from qkvsite.upstream import require


def quiet_word_cutter() -> None:
    """jieba logs at DEBUG through a handler of its own, set when Material imports it: its logger
    (standard ``logging``, named after the package) is kept to warnings."""
    logging.getLogger("jieba").setLevel(logging.WARNING)


def leave_out_notebook_page(page) -> None:
    """A notebook page repeats its chapter's text: Material's search does not index it (its
    documented ``search: exclude`` page setting); ``one_index_per_language`` gives it one entry of
    its own."""
    if page.file.src_uri.endswith(".ipynb"):
        page.meta["search"] = {"exclude": True}


def one_index_per_language(config) -> None:
    """Split the search index Material wrote (after every language's pass) into one per language."""
    index_path = Path(config.site_dir) / "search" / "search_index.json"
    if not index_path.exists():
        return
    index = json.loads(index_path.read_text(encoding="utf-8"))
    require(
        {"lang", "pipeline"} <= set(index.get("config", {}))
        and isinstance(index.get("docs"), list),
        "mkdocs-material",
        "a search index of config.lang, config.pipeline and docs",
    )
    references = set(site.REFERENCES_HEADING.values())
    index["docs"] = [d for d in index["docs"] if d["title"] not in references]
    index["docs"] += [
        notebook_entry(chapter, lang) for lang in site.languages() for chapter in site.chapters()
    ]
    for lang in site.languages()[1:]:
        prefix = site.url_prefix(lang)
        mine = [
            dict(d, location=d["location"][len(prefix) :])
            for d in index["docs"]
            if d["location"].startswith(prefix)
        ]
        index["docs"] = [d for d in index["docs"] if not d["location"].startswith(prefix)]
        write_index(
            Path(config.site_dir) / prefix / "search" / "search_index.json", index, mine, lang
        )
    write_index(index_path, index, index["docs"], site.default_language())


NOTEBOOK = {"zh": "第 {} 章的笔记本", "en": "Notebook of chapter {}"}


def notebook_entry(chapter: str, lang: str) -> dict:
    page = Page(site.DOCS / f"{chapter}.{lang}.md")
    description = plain(page.meta.get("description", "")).replace("`", "")
    entry = {
        "location": site.url_prefix(lang) + f"notebooks/{chapter}/",
        "title": NOTEBOOK[lang].format(site.chapters().index(chapter) + 1),
        "text": f"{page.title} {description}",
    }
    if lang == "zh":  # segmented into words as Material segments the other entries (jieba)
        entry = {
            key: segment(value) if key != "location" else value for key, value in entry.items()
        }
    return entry


HAN = r"\p{script: Han}+"  # a run of Chinese characters, as Material's search plugin finds them


def segment(text: str) -> str:
    """``text`` segmented into words as Material's search plugin segments Chinese (with jieba, each
    run of Chinese characters cut into words between zero-width spaces)."""
    import jieba
    from backrefs import bre

    words = lambda match: "\u200b" + "\u200b".join(jieba.cut(match[0].encode("utf-8"))) + "\u200b"  # noqa: E731
    return bre.sub(HAN, words, text).strip("\u200b")


# Each index searches its own language only, with lunr's pipeline for that language. English words
# are indexed as written, not stemmed: Material's search appends "*" to every query term, and lunr
# does not stem a term with a wildcard, so "positional*" never matched the stem "posit" (nor
# "cache*" the stem "cach"). Unstemmed, every prefix of a word the pages use finds it. Chinese is
# segmented into words by jieba at build time.
PIPELINES = {"en": ["stopWordFilter", "trimmer"], "zh": []}


def write_index(path: Path, index: dict, docs: list, lang: str) -> None:
    settings = {
        **index["config"],
        "lang": [lang],
        "pipeline": PIPELINES.get(lang, index["config"]["pipeline"]),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {**index, "config": settings, "docs": docs}
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
