"""The chapter list, written once (the first section of mkdocs.yml's nav,
``qkvsite.config.chapters``).

From it: the nav's notebook section, the chapter list of each home page (the line ``<!-- chapters
-->``), made of each chapter's title, the ``description`` of its front matter and its reading
time, and under each chapter's title the links to its notebook: the notebook page, the .ipynb
download and "Open in Colab".

Reading time is counted, not typed: the words of a chapter's English text (code, outputs and the
reference list left out; a formula or a code span is one word) at ``WORDS_PER_MINUTE``. The home
page's ``<!-- reading-time -->`` becomes the range over all chapters, e.g. "10–19".
"""

import re
from functools import lru_cache

from mkdocs.utils import get_relative_url

from qkvsite import config as site
from qkvsite.dialect import Page, scan
from qkvsite.hooks import building
from qkvsite.notebooks import colab_url

NOTEBOOKS = site.NOTEBOOKS_SECTION
PLACEHOLDER = "<!-- chapters -->"
READING_TIME = "<!-- reading-time -->"
WORDS_PER_MINUTE = 200
MINUTES = {"zh": "（约 {} 分钟）", "en": " ({} min)"}


# a pure function of the text: each chapter is counted once while it is unchanged
@lru_cache(maxsize=256)
def count_words(markdown: str) -> int:
    """The words a reader reads in a page's text: no front matter, fences, comments, link targets or
    references.

    A formula or an inline code span counts as one word, as in tests/content/prose.py."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    lines = text.split("\n")
    for fence in scan(text):
        lines[fence.start : fence.end + 1] = [""] * (fence.end + 1 - fence.start)
    text = "\n".join(lines)
    text = re.split(
        rf"^## (?:{'|'.join(map(re.escape, site.REFERENCES_HEADING.values()))})\s*$",
        text,
        flags=re.M,
    )[0]
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\$\$.+?\$\$|\$[^$\n]+\$|`[^`\n]+`", " X ", text, flags=re.S)
    text = re.sub(r"\]\([^)\s]*\)|\{[^}\n]*\}|--8<--.*", " ", text)
    return len([word for word in text.split() if re.search(r"\w", word)])


def reading_minutes(chapter: str) -> int:
    """Minutes to read a chapter's text (both editions show the English count: the same content)."""
    words = count_words((site.DOCS / f"{chapter}.en.md").read_text(encoding="utf-8"))
    return max(1, round(words / WORDS_PER_MINUTE))


def reading_range() -> str:
    minutes = [reading_minutes(chapter) for chapter in site.chapters()]
    return f"{min(minutes)}–{max(minutes)}"


def add_notebook_nav(config) -> None:
    """The nav's last section: each chapter's notebook page."""
    nav = [item for item in config.nav if not (isinstance(item, dict) and NOTEBOOKS in item)]
    config.nav = nav + [{NOTEBOOKS: [f"notebooks/{chapter}.ipynb" for chapter in site.chapters()]}]


def chapter_list(lang: str) -> str:
    """1. [title](page.md) (11 min): description, for every chapter in order."""
    items = []
    for number, chapter in enumerate(site.chapters(), start=1):
        page = Page(site.DOCS / f"{chapter}.{lang}.md")
        title = re.sub(r"^\d+\.\s*", "", page.title)
        separator = "：" if lang == "zh" else ": "
        minutes = MINUTES[lang].format(reading_minutes(chapter))
        items.append(
            f"{number}. [{title}]({chapter}.md){minutes}{separator}{page.meta['description']}"
        )
    return "\n".join(items)


NOTEBOOK_LINKS = {
    "zh": ("本章的笔记本", "下载 .ipynb", "在 Colab 中打开"),
    "en": ("This chapter as a notebook", "Download the .ipynb", "Open in Colab"),
}


def notebook_links(chapter: str, lang: str, page_url: str, repo_url: str) -> str:
    """HTML buttons under a chapter's title (raw HTML: MkDocs resolves no link to a generated
    notebook page)."""
    notebook = site.url_prefix(lang) + f"notebooks/{chapter}/"
    labels = NOTEBOOK_LINKS[lang]
    links = [
        (get_relative_url(notebook, page_url), labels[0], ""),
        (get_relative_url(notebook + f"{chapter}.ipynb", page_url), labels[1], " download"),
    ]
    if colab := colab_url(repo_url, chapter, lang):
        links.append((colab, labels[2], ""))
    buttons = "\n".join(
        f'<a class="md-button" href="{href}"{extra}>{label}</a>' for href, label, extra in links
    )
    return f'<p class="qkv-notebook-links">\n{buttons}\n</p>'


def add_chapter_links(markdown: str, page, config) -> str:
    """A chapter's notebook links under its title; the chapter list in place of the home page's
    placeholder."""
    name = site.page_name(page.file.src_uri)
    if name in site.chapters() and not page.file.src_uri.startswith("notebooks/"):
        lang = building(config)
        title, separator, rest = markdown.partition("\n")
        if not title.startswith("# "):
            raise ValueError(f"{page.file.src_uri}: a chapter starts with its title")
        links = notebook_links(name, lang, page.url, config.repo_url)
        return f"{title}\n\n{links}\n{separator}{rest}"
    if name != "index":
        return markdown
    if PLACEHOLDER not in markdown:
        raise ValueError(
            f"{page.file.src_uri} lacks the line {PLACEHOLDER} where the chapter list goes"
        )
    return markdown.replace(PLACEHOLDER, chapter_list(building(config))).replace(
        READING_TIME, reading_range()
    )
