"""The chapter list, written once (the first section of mkdocs.yml's nav,
``qkvsite.config.chapters``).

From it: the nav's notebook section, the chapter list of each home page (the line ``<!-- chapters
-->``), made of each chapter's title, the ``description`` of its front matter and its reading
time, and under each chapter's title the links to its notebook: the notebook page, the .ipynb
download and "Open in Colab".

Time is counted, not typed, in each edition from its own text. Reading: the prose (code, outputs
and the reference list left out; a formula or a code span is one word), English words at
``WORDS_PER_MINUTE``, Chinese characters at ``CHARACTERS_PER_MINUTE`` (the Latin words, formulas
and code spans of a Chinese page at ``WORDS_PER_MINUTE``). Code: the non-blank lines of the page's
Python blocks (folded ones and the exercise answers too) at ``CODE_LINES_PER_MINUTE``, plus
``MINUTES_PER_BLOCK`` to run each block and compare its output. The home page's placeholders
(``TIMES``) become the ranges and totals over all chapters.
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
READING_TIME = "<!-- reading-time -->"  # reading minutes per chapter: "10–19"
CHAPTER_TIME = "<!-- chapter-time -->"  # reading and code minutes per chapter: "40–95"
TOTAL_READING = "<!-- total-reading -->"  # hours of reading, all chapters: "2.5"
TOTAL_TIME = "<!-- total-time -->"  # hours of reading and code, all chapters: "9"
WORDS_PER_MINUTE = 200  # English prose
CHARACTERS_PER_MINUTE = 300  # Chinese prose: 300 字/分钟
CODE_LINES_PER_MINUTE = 6  # reading the code
MINUTES_PER_BLOCK = 1  # running a block and comparing its output
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# each chapter's time in the home page's chapter list: reading, then code
MINUTES = {"zh": "（阅读 {} 分钟，代码 {} 分钟）", "en": " (reading {} min, code {} min)"}


def _prose(markdown: str) -> str:
    """The text a reader reads: no front matter, fences, comments, link targets or references; a
    formula or an inline code span becomes one word (X)."""
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
    return re.sub(r"\]\([^)\s]*\)|\{[^}\n]*\}|--8<--.*", " ", text)


def _words(text: str) -> int:
    return len([word for word in text.split() if re.search(r"\w", word)])


# pure functions of the text: each chapter is counted once while it is unchanged
@lru_cache(maxsize=256)
def count_words(markdown: str) -> int:
    """The words a reader reads in a page's text: no front matter, fences, comments, link targets or
    references.

    A formula or an inline code span counts as one word, as in tests/content/prose.py."""
    return _words(_prose(markdown))


@lru_cache(maxsize=256)
def count_chinese(markdown: str) -> tuple[int, int]:
    """(Chinese characters, other words) of a Chinese page's text, counted as ``count_words``
    counts: a Latin word, a number, a formula or a code span is one word."""
    text = _prose(markdown)
    return len(HAN.findall(text)), _words(HAN.sub(" ", text))


def page_text(chapter: str, lang: str) -> str:
    return (site.DOCS / f"{chapter}.{lang}.md").read_text(encoding="utf-8")


def reading_minutes(chapter: str, lang: str = "en") -> int:
    """Minutes to read a chapter's prose in ``lang``: words at WORDS_PER_MINUTE, Chinese characters
    at CHARACTERS_PER_MINUTE."""
    text = page_text(chapter, lang)
    if lang == "zh":
        characters, words = count_chinese(text)
        minutes = characters / CHARACTERS_PER_MINUTE + words / WORDS_PER_MINUTE
    else:
        minutes = count_words(text) / WORDS_PER_MINUTE
    return max(1, round(minutes))


def code_size(chapter: str, lang: str = "en") -> tuple[int, int]:
    """(Python blocks, their non-blank lines) of a chapter page, includes expanded: the same code
    in both editions."""
    blocks = Page(site.DOCS / f"{chapter}.{lang}.md").blocks
    lines = sum(1 for block in blocks for line in block.code.split("\n") if line.strip())
    return len(blocks), lines


def code_minutes(chapter: str, lang: str = "en") -> int:
    """Minutes to read the code at CODE_LINES_PER_MINUTE and run each block (MINUTES_PER_BLOCK)."""
    blocks, lines = code_size(chapter, lang)
    return round(lines / CODE_LINES_PER_MINUTE + blocks * MINUTES_PER_BLOCK)


def hours(minutes: int) -> str:
    """Minutes as hours to the nearest half hour: 155 -> "2.5"."""
    return f"{max(1, round(minutes / 30)) / 2:g}"


def times(lang: str) -> dict[str, str]:
    """What each of the home page's placeholders becomes in ``lang``."""
    reading = [reading_minutes(chapter, lang) for chapter in site.chapters()]
    code = [code_minutes(chapter, lang) for chapter in site.chapters()]
    both = [r + c for r, c in zip(reading, code, strict=True)]
    return {
        READING_TIME: f"{min(reading)}–{max(reading)}",
        CHAPTER_TIME: f"{min(both)}–{max(both)}",
        TOTAL_READING: hours(sum(reading)),
        TOTAL_TIME: hours(sum(both)),
    }


def reading_range(lang: str = "en") -> str:
    return times(lang)[READING_TIME]


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
        minutes = MINUTES[lang].format(reading_minutes(chapter, lang), code_minutes(chapter, lang))
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
    lang = building(config)
    markdown = markdown.replace(PLACEHOLDER, chapter_list(lang))
    for placeholder, value in times(lang).items():
        markdown = markdown.replace(placeholder, value)
    return markdown
