"""Where Material for MkDocs and mkdocs-static-i18n need help, and no template block offers it.

The rest is done with template overrides in ``overrides/`` (repository link, footer, link
previews). Here:

1. No ``<link rel="alternate" hreflang>`` in ``<head>``: Material's JavaScript fetches
   ``sitemap.xml`` relative to each, and mkdocs-static-i18n points them at the other language's
   page, so every page got a 404. The alternates stay in ``sitemap.xml`` and the language
   switcher. (No template block can drop them: the plugin sets ``config.extra.alternate`` per
   page, which Jinja reads before any override could.)
2. Search per language (``qkvsite.hooks.search`` splits the index): the ``base`` of Material's
   ``__config`` JSON is the language's root, so English pages search ``en/`` (a page without it
   fails the build).
3. A 404 page per language with its switcher: every pass renders the theme's 404.html to the site
   root, its switcher holding the last page's links. They are set back to the language roots; the
   Chinese page stays at ``404.html``, the English one goes to ``en/404.html``.
4. The language switcher keeps the reader's section: the editions have the same headings in the
   same order (tests/test_i18n.py), so ``anchors.json`` lists each page's heading ids per
   language and ``docs/javascripts/site.js`` adds the other edition's id of the same heading to
   the switcher's link.
"""

import json
import re
from copy import deepcopy
from pathlib import Path

from qkvsite import config as site
from qkvsite.hooks import building, toc_items
from qkvsite.upstream import require

HEAD_ALTERNATE = re.compile(r"\s*<link\b(?=[^>]*\brel=\"alternate\")(?=[^>]*\bhreflang=)[^>]*>")
CONFIG_JSON = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)


def set_search_base(output: str, lang: str) -> str:
    """Point Material's search at the index of ``lang`` (the default language keeps the site
    root)."""
    match = CONFIG_JSON.search(output)
    if match is None:
        require(False, "mkdocs-material", 'a <script id="__config"> in every page')
    settings = json.loads(match[2])
    if "base" not in settings:
        require(False, "mkdocs-material", "'base' in the page's __config")
    # with its trailing slash: Material resolves "search/search_index.json" against it
    settings["base"] = settings["base"].rstrip("/") + "/" + site.url_prefix(lang)
    text = (
        json.dumps(settings).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    )
    return output[: match.start(2)] + text + output[match.end(2) :]


def drop_head_alternates(output: str) -> str:
    head, sep, body = output.partition("</head>")
    head, found = HEAD_ALTERNATE.subn("", head)
    if not found:
        # check whether this fix is still needed
        require(False, "mkdocs-material", "<link rel=alternate hreflang> in <head>")
    return head + sep + body


def fix_page(output: str, config) -> str:
    lang = building(config)
    output = drop_head_alternates(output)
    return output if lang == site.default_language() else set_search_base(output, lang)


def not_found_context(context, template_name, config):
    """The 404 page's language switcher leads to the language roots, not to the last page built."""
    if template_name != "404.html":
        return context
    i18n = config.plugins.get("i18n")
    if i18n is not None:
        require(hasattr(i18n, "extra_alternate"), "mkdocs-static-i18n", "extra_alternate")
    if i18n is not None and i18n.extra_alternate:
        # an attribute, as the plugin sets it
        config.extra.alternate = deepcopy(i18n.extra_alternate)
    context["qkv_prefix"] = {lang: site.url_prefix(lang) for lang in site.languages()}
    return context


_not_found_pages: dict[str, str] = {}


def not_found_page(output, template_name, config):
    """Keep the default language's 404.html at the root; the others go to <lang>/404.html."""
    if template_name != "404.html" or "i18n" not in config.plugins:
        return output
    lang = building(config)
    output = fix_page(output, config)
    if lang == site.default_language():
        _not_found_pages[lang] = output
        return output
    target = Path(config.site_dir) / site.url_prefix(lang) / "404.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(output, encoding="utf-8")
    return _not_found_pages.get(site.default_language(), output)


def record_anchors(page, lang: str, anchors: dict) -> None:
    """Item 4: the page's heading ids in order, under its path inside its language's root."""
    ids = [item.id for item in toc_items(page.toc)]
    anchors.setdefault(page.url.removeprefix(site.url_prefix(lang)), {})[lang] = ids


def write_anchors(config, anchors: dict) -> None:
    """Item 4: ``anchors.json`` in each language's root, where site.js finds it from the page's
    ``base``."""
    data = json.dumps(anchors, ensure_ascii=False, separators=(",", ":"))
    for lang in site.languages():
        (Path(config.site_dir) / site.url_prefix(lang) / "anchors.json").write_text(
            data, encoding="utf-8"
        )
