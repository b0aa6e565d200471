"""The two editions stay in step: same pages, same code, same figures, same anchors, same terms."""

import html
import json
import re

import pytest
from pymdownx.slugs import slugify as slugs

from qkvsite import config
from qkvsite.config import DOCS
from qkvsite.config import NOTEBOOKS_SECTION as NOTEBOOKS
from qkvsite.dialect import Page
from qkvsite.hooks.math import plain, plain_html
from tests.content.test_math import as_written_before

LANGS = ["zh", "en"]
slugify = slugs(case="lower")  # mkdocs.yml's toc slugify


def names(lang):
    return sorted(p.name.split(".")[0] for p in DOCS.glob(f"*.{lang}.md"))


def text(name, lang):
    return (DOCS / f"{name}.{lang}.md").read_text(encoding="utf-8")


def test_every_page_exists_in_both_languages():
    assert names("zh") == names("en")
    stray = [p.name for p in DOCS.rglob("*.md") if not re.search(r"\.(zh|en)\.md$", p.name)]
    assert stray == [], "every page is <name>.zh.md or <name>.en.md"


PAGES = names("zh")


def includes(md):
    return re.findall(r'^\s*--8<--\s+"([^"]+)"', md, re.M)


def figures(md):
    return re.findall(r"\]\((figures/[^)]+\.svg)\)", md)


def markers(md):
    return re.findall(r"<!--\s*(pytest[^>]*?)\s*-->", md)


def explicit_anchors(md):
    """The anchors both editions share: ``{#q8}``, ``{ #q8 data-toc-label="..." }``. A heading with
    a formula that keeps the anchor its text gave it (tests/content/test_math.py) keeps its own
    edition's anchor."""
    anchors = []
    for text, anchor, label in re.findall(
        r'^#* ?(.*?) ?\{ ?#([\w-]+)(?: data-toc-label="([^"]*)")? ?\}', md, re.M
    ):
        if not label or anchor != slugify(as_written_before(plain(text).replace("`", "")), "-"):
            anchors.append(anchor)
    return anchors


@pytest.mark.parametrize("name", PAGES)
def test_both_editions_include_the_same_snippet_sections_in_the_same_order(name):
    assert includes(text(name, "zh")) == includes(text(name, "en"))


@pytest.mark.parametrize("name", PAGES)
def test_both_editions_show_the_same_figures_in_the_same_order(name):
    assert figures(text(name, "zh")) == figures(text(name, "en"))


@pytest.mark.parametrize("name", PAGES)
def test_both_editions_mark_the_same_continuations_and_outputs(name):
    assert markers(text(name, "zh")) == markers(text(name, "en"))


@pytest.mark.parametrize("name", PAGES)
def test_both_editions_have_the_same_explicit_anchors(name):
    assert explicit_anchors(text(name, "zh")) == explicit_anchors(text(name, "en"))


@pytest.mark.parametrize("name", PAGES)
def test_every_figure_has_alt_text_and_a_caption_in_both_editions(name):
    for lang in LANGS:
        md = text(name, lang)
        for match in re.finditer(r"!\[([^\]]*)\]\(figures/[^)]+\)\n(.*)", md):
            assert match.group(1).strip(), f"{name}.{lang}.md: a figure has no alt text"
            assert match.group(2).strip() == "/// caption", (
                f"{name}.{lang}.md: {match.group(0)[:60]}"
            )


def test_links_to_anchors_point_at_anchors_of_the_same_language():
    # a link like faq.md#q8 must work in both editions: the anchor ids are shared (explicit {#...})
    for name in PAGES:
        for lang in LANGS:
            for target, anchor in re.findall(r"\]\(([\w-]+)\.md#([^)]+)\)", text(name, lang)):
                ids = explicit_anchors(text(target, lang))
                if anchor.startswith("q") and anchor[1:].isdigit():
                    assert anchor in ids, f"{name}.{lang}.md links to {target}.md#{anchor}"


def nav_entries(items):
    """(title or None, path or None) for every entry of mkdocs.yml's nav, sections included."""
    for item in items:
        title, value = next(iter(item.items())) if isinstance(item, dict) else (None, item)
        if isinstance(value, list):
            yield title, None
            yield from nav_entries(value)
        else:
            yield title, value


def test_every_page_is_in_the_nav_and_every_nav_title_is_translated():
    entries = list(nav_entries(config.settings()["nav"]))
    english = next(lang for lang in config.i18n()["languages"] if lang["locale"] == "en")
    titles = {title for title, _ in entries if title} | {NOTEBOOKS}
    assert titles == set(english["nav_translations"])
    assert sorted(path.removesuffix(".md") for _, path in entries if path) == PAGES


@pytest.mark.parametrize("lang", LANGS)
def test_each_chapter_is_numbered_in_registry_order_and_describes_itself(lang):
    for number, chapter in enumerate(config.chapters(), start=1):
        page = Page(DOCS / f"{chapter}.{lang}.md")
        assert page.title.startswith(f"{number}. "), f"{chapter}.{lang}.md: {page.title}"
        assert page.meta.get("description"), (
            f"{chapter}.{lang}.md has no description in its front matter"
        )


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_lists_every_chapter_with_its_description(site, lang):
    home = (site / config.url_prefix(lang) / "index.html").read_text(encoding="utf-8")
    # the home page as text, its formulas (MathML) written out plainly; so is each description, with
    # its code spans
    text = html.unescape(re.sub(r"<[^>]+>", "", plain_html(home)))
    for chapter in config.chapters():
        page = Page(DOCS / f"{chapter}.{lang}.md")
        assert f'href="{chapter}/"' in home
        assert plain(page.meta["description"]).replace("`", "") in text


def first_heading(name, lang):
    return Page(DOCS / f"{name}.{lang}.md").title


@pytest.mark.parametrize("lang", LANGS)
def test_nav_lists_each_chapter_and_its_notebook_under_the_chapter_title_of_its_language(
    site, lang
):
    home = (site / config.url_prefix(lang) / "index.html").read_text(encoding="utf-8")
    nav = html.unescape(home[home.index("md-nav--primary") : home.index('<div class="md-content"')])
    for chapter in config.chapters():
        assert nav.count(first_heading(chapter, lang)) == 2, chapter  # the chapter and its notebook


# --- terms -----------------------------------------------------------------


def glossary():
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \| [^|]+ \|$", text("glossary", "zh"), re.M)
    return [(zh, en) for zh, en in rows if zh not in {"中文", "---"}]


def test_glossary_lists_the_same_terms_in_both_editions():
    en_rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \| [^|]+ \|$", text("glossary", "en"), re.M)
    assert glossary() == [(zh, en) for zh, en in en_rows if zh not in {"中文", "---"}]
    assert len(glossary()) >= 20


@pytest.mark.parametrize("name", [n for n in PAGES if n != "glossary"])
def test_pages_use_the_glossary_terms_in_both_editions(name):
    # a term may wrap across lines
    zh, en = (text(name, "zh"), " ".join(text(name, "en").split()).lower())

    def uses(term):  # 点积 inside 缩放点积注意力 is the longer term, not this one
        longer = [z for z, _ in glossary() if term in z and z != term]
        return term in re.sub("|".join(map(re.escape, longer)) or "$^", "", zh)

    def stem(term):  # "concatenate" also counts as "concatenating", "scale" as "scaled"
        return term.lower().removesuffix("e")

    missing = [f"{z} → {e}" for z, e in glossary() if uses(z) and stem(e) not in en]
    assert missing == [], f"{name}.en.md lacks the English terms for: {missing}"


# --- search ----------------------------------------------------------------


def search_index(site, lang):
    path = site / ("" if lang == "zh" else lang) / "search" / "search_index.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_each_language_has_its_own_search_index(site):
    zh, en = search_index(site, "zh"), search_index(site, "en")
    zh_pages = {d["location"].split("#")[0] for d in zh["docs"]}
    en_pages = {d["location"].split("#")[0] for d in en["docs"]}
    assert zh_pages == en_pages  # same pages, each index relative to its own edition
    assert all(
        re.search(r"[\u4e00-\u9fff]", d["title"] + d["text"])
        for d in zh["docs"]
        if d["location"] == ""
    )
    assert not any(re.search(r"[\u4e00-\u9fff]{4,}", d["title"]) for d in en["docs"])
    # each index is searched with its own language's pipeline only (English words unstemmed:
    # qkvsite.hooks.search)
    assert zh["config"]["lang"] == ["zh"] and en["config"]["lang"] == ["en"]
    assert (
        en["config"]["pipeline"] == ["stopWordFilter", "trimmer"] and zh["config"]["pipeline"] == []
    )
    # a notebook page is one entry: the chapter's results do not come twice
    for index in (zh, en):
        notebook_entries = [d for d in index["docs"] if d["location"].startswith("notebooks/")]
        assert sorted(d["location"] for d in notebook_entries) == sorted(
            f"notebooks/{c}/" for c in config.chapters()
        )


def test_reference_lists_are_left_out_of_the_search_index_and_the_exercises_are_in(site):
    for lang in config.languages():
        titles = [d["title"] for d in search_index(site, lang)["docs"]]
        assert config.REFERENCES_HEADING[lang] not in titles
        assert titles.count(config.EXERCISES_HEADING[lang]) == len(config.chapters())


def test_chinese_search_index_is_segmented_into_words(site):
    text = " ".join(d["text"] for d in search_index(site, "zh")["docs"])
    for word in ["注意力", "缩放", "多头", "掩码"]:
        assert f"\u200b{word}\u200b" in text, f"{word} is not a separate word in the index"


# --- 404 -------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, lang, title", [("404.html", "zh", "页面不存在"), ("en/404.html", "en", "page not found")]
)
def test_each_language_has_its_own_404_page(site, path, lang, title):
    html = (site / path).read_text(encoding="utf-8")
    assert f'<html lang="{lang}"' in html
    assert title in html


@pytest.mark.site
def test_every_page_has_the_same_number_of_headings_in_both_editions_for_the_language_switcher(
    site,
):
    import json

    from qkvsite import config

    pages = json.loads((site / "anchors.json").read_text(encoding="utf-8"))
    assert json.loads((site / "en" / "anchors.json").read_text(encoding="utf-8")) == pages
    for path, ids in pages.items():
        assert set(ids) == set(config.languages()), path
        assert len({len(each) for each in ids.values()}) == 1, (path, ids)
