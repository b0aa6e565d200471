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
   repeat their chapter's text, are left out.
"""

import hashlib
import json
import re
from pathlib import Path

import material
from mkdocs.plugins import event_priority

from qkvsite import config as site

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
        path = CACHE / f"{entry_key(page, index.config)}.json"
        try:
            index.entries.extend(json.loads(path.read_text(encoding="utf-8")))
            return
        except (OSError, ValueError):
            pass
        before = len(index.entries)
        add(page)
        CACHE.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(index.entries[before:], ensure_ascii=False), encoding="utf-8")
        temporary.replace(path)

    add_entry_from_context.qkv_cached = True
    index.add_entry_from_context = add_entry_from_context


def on_pre_build(config):
    search = config.plugins.get("material/search")
    if search is not None and getattr(search, "search_index", None) is not None:
        cached_indexing(search.search_index)


@event_priority(-200)  # after the search plugin has written the index
def on_post_build(config):
    index_path = Path(config.site_dir) / "search" / "search_index.json"
    if not index_path.exists():
        return
    index = json.loads(index_path.read_text(encoding="utf-8"))
    # notebook pages repeat their chapter's text: search lists the chapter, not its copy
    index["docs"] = [d for d in index["docs"] if not re.match(r"(\w\w/)?notebooks/", d["location"])]
    for lang in site.languages()[1:]:
        prefix = site.url_prefix(lang)
        mine = [
            dict(d, location=d["location"][len(prefix) :]) for d in index["docs"] if d["location"].startswith(prefix)
        ]
        if not mine:
            continue  # this language's pass has not run yet
        index["docs"] = [d for d in index["docs"] if not d["location"].startswith(prefix)]
        out = Path(config.site_dir) / prefix / "search" / "search_index.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({**index, "docs": mine}, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    index_path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
