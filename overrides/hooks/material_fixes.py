"""MkDocs hook: small fixes for Material for MkDocs, most of them for mkdocs-static-i18n.

1. Material writes ``<link rel="alternate" hreflang>`` into ``<head>`` and its
   JavaScript fetches ``sitemap.xml`` relative to each of them. The i18n plugin
   points them at the same page in the other language, so every page asked for
   ``<page>/sitemap.xml`` and got a 404. The header's language switcher keeps
   its page-to-page links; the head tags go.
2. One search index per language. Material writes a single index for the whole
   site, so an English query listed Chinese pages and the other way round. After
   the build the index is split by language: ``search/search_index.json`` for
   Chinese, ``en/search/search_index.json`` for English, and English pages look
   for theirs under ``en/``.
   Notebook pages, which repeat their chapter's text, are left out of search.
3. The search dialog gets an accessible name in the page's language.
4. A 404 page per language. Every language pass renders the theme's 404.html
   to the site root, so the last pass (English) replaced the Chinese one.
   The Chinese page is kept at ``404.html``; the English one goes to
   ``en/404.html``.
"""

import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority

HEAD_ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')
CONFIG_BASE = re.compile(r'(<script id="__config" type="application/json">\{[^<]*?"base": ")([^"]*)(")')


def _other_languages(config) -> list[str]:
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return []
    return [lang for lang in i18n.build_languages if lang != i18n.default_language]


def _drop_head_alternates(output):
    head, sep, body = output.partition("</head>")
    return HEAD_ALTERNATE.sub("", head) + sep + body


SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
SEARCH_LABEL = {"zh": "搜索", "en": "Search"}


def on_post_page(output, page, config):
    # the search dialog needs an accessible name (Lighthouse: aria-dialog-name)
    label = SEARCH_LABEL.get(config.theme["language"], "Search")
    output = output.replace(SEARCH_DIALOG, SEARCH_DIALOG[:-1] + f' aria-label="{label}">', 1)
    head, sep, body = _drop_head_alternates(output).partition("</head>")
    lang = config.plugins["i18n"].current_language if "i18n" in config.plugins else None
    if lang in _other_languages(config):
        body = CONFIG_BASE.sub(lambda m: f"{m[1]}{m[2]}/{lang}/{m[3]}", body, count=1)
    return head + sep + body


_not_found_pages: dict[str, str] = {}


def on_post_template(output, template_name, config):
    """Keep the default language's 404.html at the root; others go to <lang>/404.html."""
    i18n = config.plugins.get("i18n")
    if template_name != "404.html" or i18n is None:
        return output
    output = _drop_head_alternates(output)
    lang = i18n.current_language
    if lang == i18n.default_language:
        _not_found_pages[lang] = output
        return output
    target = Path(config.site_dir) / lang / "404.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(output, encoding="utf-8")
    return _not_found_pages.get(i18n.default_language, output)


@event_priority(-200)  # after the search plugin has written the index
def on_post_build(config):
    index_path = Path(config.site_dir) / "search" / "search_index.json"
    if not index_path.exists():
        return
    index = json.loads(index_path.read_text(encoding="utf-8"))
    # notebook pages repeat their chapter's text: search lists the chapter, not its copy
    index["docs"] = [d for d in index["docs"] if not re.match(r"(\w\w/)?notebooks/", d["location"])]
    for lang in _other_languages(config):
        prefix = f"{lang}/"
        mine = [
            dict(d, location=d["location"][len(prefix) :]) for d in index["docs"] if d["location"].startswith(prefix)
        ]
        if not mine:
            continue  # this language's pass has not run yet
        index["docs"] = [d for d in index["docs"] if not d["location"].startswith(prefix)]
        out = Path(config.site_dir) / lang / "search" / "search_index.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({**index, "docs": mine}, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    index_path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
