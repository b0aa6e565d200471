"""Notebook edition of the chapters, generated from the chapter pages.

A chapter page (``docs/<chapter>.<lang>.md``) becomes a Jupytext Markdown
notebook: its prose becomes Markdown cells and its Python blocks, with their
``--8<--`` includes expanded, become code cells. The code therefore comes from
the same ``snippets/`` sections as the page and is never kept twice. Printed
outputs shown on the page are dropped: the notebook's outputs are the ones its
own execution produces (mkdocs-jupyter runs it at build time).
"""

from __future__ import annotations

import re
import textwrap

import jupytext
import markdown

CHAPTERS = ["dot-product", "qkv", "scaled-dot-product", "multi-head", "shapes"]

HEADER = {
    "zh": "本笔记本由[本章页面](../../{chapter}/)自动生成，代码与页面上的代码块完全相同。"
    "可以[下载 .ipynb 文件](../{chapter}.ipynb)，在 Jupyter 或 Colab 里从上到下运行。",
    "en": "This notebook is generated from [the chapter page](../../{chapter}/); its code is the page's code. "
    "[Download the .ipynb file](../{chapter}.ipynb) to run it top to bottom in Jupyter or Colab.",
}

KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*\n?", re.M | re.S)
OUTPUT = re.compile(
    r"^<!--\s*pytest-codeblocks:expected-output\s*-->\s*\n```[^\n]*\n.*?^```[ \t]*\n?",
    re.M | re.S,
)
MARKER = re.compile(r"^<!--.*?-->[ \t]*\n", re.M)
CAPTION = re.compile(r"^/// caption\n(.*?)^///[ \t]*\n?", re.M | re.S)
FIGURE = re.compile(r"!\[([^\]]*)\]\(figures/([^)]+)\)")
ADMONITION = re.compile(
    r'^(?:!!!|\?\?\?\+?) \w+(?: "([^"]*)")?\n((?:(?:    .*)?\n)*)', re.M
)
PAGE_LINK = re.compile(r"\]\(([\w-]+)\.md(#[^)]*)?\)")
ATTRS = re.compile(r"[ \t]*\{#[\w-]+\}")


def expand_includes(text: str, snippet_settings: dict) -> str:
    md = markdown.Markdown(
        extensions=["pymdownx.snippets"],
        extension_configs={"pymdownx.snippets": snippet_settings},
    )
    return "\n".join(md.preprocessors["snippet"].run(text.split("\n")))


def _quote_admonition(match: re.Match) -> str:
    """An admonition becomes a block quote; one that holds code is just dedented (code must stay a cell)."""
    title, body = match.group(1), textwrap.dedent(match.group(2)).strip("\n")
    lines = ([f"**{title}**", ""] if title else []) + body.split("\n")
    if "```" in body:
        return "\n".join(lines) + "\n\n"
    return "\n".join(f"> {line}".rstrip() for line in lines) + "\n\n"


def chapter_markdown(
    page_text: str, chapter: str, lang: str, snippet_settings: dict
) -> str:
    """The Jupytext Markdown notebook for one chapter page."""
    text = OUTPUT.sub("", page_text)
    text = MARKER.sub("", text)
    text = expand_includes(text, snippet_settings)
    text = CAPTION.sub(
        lambda m: "*" + " ".join(m.group(1).split()) + "*\n", text
    )
    text = FIGURE.sub(r"![\1](../../figures/\2)", text)
    text = ADMONITION.sub(_quote_admonition, text)
    text = PAGE_LINK.sub(
        lambda m: (
            f"](../../{'' if m.group(1) == 'index' else m.group(1) + '/'}{m.group(2) or ''})"
        ),
        text,
    )
    text = ATTRS.sub("", text)
    # code fences: Python becomes a code cell (titles dropped); other fences stay Markdown
    text = FENCE.sub(
        lambda m: (
            f"```{'python' if m.group(1) in ('python', 'py') else m.group(1)}\n{m.group(2)}```\n"
        ),
        text,
    )
    title, _, rest = text.partition("\n")
    return f"{title}\n\n{HEADER[lang].format(chapter=chapter)}\n{rest}"


def chapter_notebook(
    page_text: str, chapter: str, lang: str, snippet_settings: dict
):
    """The notebook (nbformat) for one chapter page, with a Python 3 kernel."""
    notebook = jupytext.reads(
        chapter_markdown(page_text, chapter, lang, snippet_settings), fmt="md"
    )
    notebook.metadata["kernelspec"] = KERNEL
    notebook.metadata.pop("jupytext", None)
    return notebook


def embed_figures(notebook, lang: str):
    """Figures as cell attachments, so the downloaded notebook shows them without the site."""
    from snippets.figures import load_all, render

    load_all()
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for name in re.findall(
            r"\]\(\.\./\.\./figures/([\w-]+)\.svg\)", cell.source
        ):
            cell.source = cell.source.replace(
                f"](../../figures/{name}.svg)", f"](attachment:{name}.svg)"
            )
            cell.setdefault("attachments", {})[f"{name}.svg"] = {
                "image/svg+xml": render(name, lang).decode()
            }
    return notebook


def write_if_changed(path, content: str) -> bool:
    """Write only when the content changed, so `mkdocs serve` does not rebuild forever."""
    if path.exists() and path.read_text(encoding="utf-8") == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return True


def write_notebooks(
    docs_dir, snippet_settings: dict, langs=("zh", "en")
) -> list:
    """docs/notebooks/<chapter>.<lang>.md (rendered by mkdocs-jupyter) and .ipynb (the download)."""
    written = []
    for chapter in CHAPTERS:
        for lang in langs:
            page = docs_dir / f"{chapter}.{lang}.md"
            notebook = chapter_notebook(
                page.read_text(encoding="utf-8"),
                chapter,
                lang,
                snippet_settings,
            )
            pages = {
                "md": jupytext.writes(
                    notebook, fmt="md"
                ),  # rendered on the site, figures linked
                "ipynb": jupytext.writes(
                    embed_figures(notebook, lang), fmt="ipynb"
                ),  # the download
            }
            for ext, content in pages.items():
                path = docs_dir / "notebooks" / f"{chapter}.{lang}.{ext}"
                if write_if_changed(path, content):
                    written.append(path)
    return written
