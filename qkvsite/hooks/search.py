"""Search: each page indexed once per content, and one index per language.

1. Material's search plugin parses the HTML of every page on every build, the
   largest cost of a build that changed nothing. Its entries for a page follow
   from the page's URL, content, table of contents and metadata, so they are kept
   in ``.cache/search/`` under a key of exactly those (and the plugin's version
   and settings): an unchanged page is not parsed again. The cache wraps the
   plugin's ``SearchIndex.add_entry_from_context``; a test checks that the index
   is the same with and without it.
2. One index per language. Material writes one index for the whole site, so an
   English query listed Chinese pages and the other way round. After the build
   the index is split: ``search/search_index.json`` for Chinese,
   ``en/search/search_index.json`` for English (Material's search on English
   pages looks there: ``qkvsite.hooks.material_fixes``). Notebook pages, which
   repeat their chapter's text, are left out, and so are the reference lists at
   the end of the chapters (``config.REFERENCES_HEADING``): a bibliography full
   of paper titles would rank first for the very words the chapters explain.
3. Formulas are indexed as text: the same wrapper hands the plugin the page with
   each formula's MathML written as plain text (``qkvsite.hooks.math.plain_html``),
   so that a result reads "divide by √d_k", not "divide by dk".
"""

import hashlib
import importlib.metadata
import json
import re
import threading
from pathlib import Path

import material
from mkdocs.plugins import event_priority

from qkvsite import config as site
from qkvsite.cache import write_atomically
from qkvsite.dialect import Page
from qkvsite.hooks import building
from qkvsite.hooks.math import plain, plain_html

CACHE = site.ROOT / ".cache" / "search"


def entry_key(page, settings: dict) -> str:
    material_version = getattr(material, "__version__", "")
    toc = json.dumps([[item.id, item.title, item.url] for item in _toc_items(page.toc)], ensure_ascii=False)
    meta = json.dumps(page.meta, sort_keys=True, default=str, ensure_ascii=False)
    parts = [material_version, json.dumps(settings, sort_keys=True, default=str), page.url, page.title or "", toc, meta]
    return hashlib.sha256("\0".join(parts + [page.content]).encode()).hexdigest()


def _toc_items(toc):
    for item in toc:
        yield item
        yield from _toc_items(item.children)


def cached_indexing(index):
    """Wrap ``index.add_entry_from_context`` so that an unchanged page reuses its entries."""
    add = index.add_entry_from_context
    if getattr(add, "qkv_cached", False):
        return

    def add_entry_from_context(page):
        content = page.content
        page.content = plain_html(content)
        try:
            add_cached(page)
        finally:
            page.content = content

    def add_cached(page):
        path = CACHE / f"{entry_key(page, index.config)}.json"
        try:
            index.entries.extend(json.loads(path.read_text(encoding="utf-8")))
            return
        except (OSError, ValueError):
            pass
        before = len(index.entries)
        add(page)
        write_atomically(path, json.dumps(index.entries[before:], ensure_ascii=False))

    add_entry_from_context.qkv_cached = True
    index.add_entry_from_context = add_entry_from_context


@event_priority(150)  # before the notebooks and figures: jieba loads while they run
def on_pre_build(config):
    search = config.plugins.get("material/search")
    if search is not None and getattr(search, "search_index", None) is not None:
        cached_indexing(search.search_index)
    if building(config) == site.default_language() and not any(CACHE.glob("*.json")):
        load_jieba_ahead()


_jieba_loading = None


def load_jieba_ahead() -> None:
    """On a build with no page's entries cached, jieba's dictionary (about a second) is loaded in a thread while
    the build runs the notebooks and draws the figures, not when the first Chinese page is indexed, after them.
    (jieba loads it once, under a lock: a page indexed meanwhile waits for it.)"""
    global _jieba_loading
    try:
        import jieba
    except ImportError:  # Material segments Chinese only with jieba installed
        return
    if _jieba_loading is None:
        _jieba_loading = threading.Thread(target=jieba.initialize, name="jieba", daemon=True)
        _jieba_loading.start()


@event_priority(-200)  # after the search plugin has written the index
def on_post_build(config):
    index_path = Path(config.site_dir) / "search" / "search_index.json"
    if not index_path.exists():
        return
    index = json.loads(index_path.read_text(encoding="utf-8"))
    references = set(site.REFERENCES_HEADING.values())
    index["docs"] = [
        d for d in index["docs"] if not re.match(r"(\w\w/)?notebooks/", d["location"]) and d["title"] not in references
    ]
    index["docs"] += [notebook_entry(chapter, lang) for lang in site.languages() for chapter in site.chapters()]
    for lang in site.languages()[1:]:
        prefix = site.url_prefix(lang)
        mine = [
            dict(d, location=d["location"][len(prefix) :]) for d in index["docs"] if d["location"].startswith(prefix)
        ]
        if not mine:
            continue  # this language's pass has not run yet
        index["docs"] = [d for d in index["docs"] if not d["location"].startswith(prefix)]
        write_index(Path(config.site_dir) / prefix / "search" / "search_index.json", index, mine, lang)
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
        entry = {key: segment(value) if key != "location" else value for key, value in entry.items()}
    return entry


def segment(text: str) -> str:
    """``text`` segmented as Material segments Chinese, kept in the cache (loading jieba's dictionary takes a
    second, on a build where every page's entries come from the cache)."""
    versions = f"{getattr(material, '__version__', '')} jieba {importlib.metadata.version('jieba')}"
    key = hashlib.sha256("\0".join([versions, text]).encode()).hexdigest()[:24]
    path = CACHE / f"segmented-{key}.txt"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    from material.plugins.search.plugin import SearchIndex

    segmented = SearchIndex()._segment_chinese(text)
    write_atomically(path, segmented)
    return segmented


# Each index searches its own language only: lunr's pipeline for that language (the stemmer finds "heads" for
# "head" in English; Chinese is segmented into words by jieba at build time).
PIPELINES = {"en": ["stemmer"], "zh": []}


def write_index(path: Path, index: dict, docs: list, lang: str) -> None:
    settings = {**index["config"], "lang": [lang], "pipeline": PIPELINES.get(lang, index["config"]["pipeline"])}
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {**index, "config": settings, "docs": docs}
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
