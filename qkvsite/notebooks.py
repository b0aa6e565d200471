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
from pathlib import Path

import jupytext

from qkvsite import config
from qkvsite.dialect import MARKER, Page

HEADER = {
    "zh": "本笔记本由[本章页面](../../{chapter}/)自动生成，代码与页面上的代码块完全相同。"
    "可以[下载 .ipynb 文件](../{chapter}.ipynb)，在 Jupyter 或 Colab 里从上到下运行。",
    "en": "This notebook is generated from [the chapter page](../../{chapter}/); its code is the page's code. "
    "[Download the .ipynb file](../{chapter}.ipynb) to run it top to bottom in Jupyter or Colab.",
}

KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}

ADMONITION = re.compile(r'^(?:!!!|\?\?\?\+?) \w+(?: "([^"]*)")?\n((?:(?:    .*)?\n)*)', re.M)
PAGE_LINK = re.compile(r"\]\(([\w-]+)\.md(#[^)]*)?\)")
ATTRS = re.compile(r"[ \t]*\{#[\w-]+\}")


def _quote_admonition(match: re.Match) -> str:
    """An admonition becomes a block quote; one that holds code is just dedented (code must stay a cell)."""
    title, body = match.group(1), textwrap.dedent(match.group(2)).strip("\n")
    lines = ([f"**{title}**", ""] if title else []) + body.split("\n")
    if "```" in body:
        return "\n".join(lines) + "\n\n"
    return "\n".join(f"> {line}".rstrip() for line in lines) + "\n\n"


def _page_link(match: re.Match) -> str:
    name, anchor = match.group(1), match.group(2) or ""
    return f"](../../{'' if name == 'index' else name + '/'}{anchor})"


def chapter_markdown(page: Page, chapter: str) -> str:
    """The Jupytext Markdown notebook of one chapter page.

    Python blocks become code cells (their includes expanded), printed outputs
    and markers go (the notebook shows its own outputs), a figure's caption
    becomes an italic line under it.
    """
    lines = page.text.split("\n")
    replace: dict[int, tuple[int, list[str]]] = {}  # first line -> (last line, new lines)
    if front := page.text[: len(page.text) - len(page.body)]:
        replace[0] = (front.count("\n") - 1, [])  # the front matter is the site's, not the notebook's
    for block in page.blocks:
        fence = block.fence
        code = [fence.indent + line if line else line for line in block.code.rstrip("\n").split("\n")]
        replace[fence.start] = (fence.end, [f"{fence.indent}```python", *code, f"{fence.indent}```"])
        if block.output:
            replace[block.output.start] = (block.output.end, [])
    for figure in page.figures:
        start = figure.lineno - 1
        image = f"![{figure.alt}](../../figures/{figure.name}.svg)"
        if figure.caption:
            end = next(j for j in range(start + 2, len(lines)) if lines[j].strip() == "///")
            replace[start] = (end, [image, "", f"*{figure.caption}*"])
        else:
            replace[start] = (start, [image])
    out, i = [], 0
    while i < len(lines):
        if i in replace:
            end, new = replace[i]
            out.extend(new)
            i = end + 1
        elif MARKER.match(lines[i]):
            i += 1
        else:
            out.append(lines[i])
            i += 1
    text = "\n".join(out)
    text = ADMONITION.sub(_quote_admonition, text)
    text = PAGE_LINK.sub(_page_link, text)
    text = ATTRS.sub("", text)
    title, _, rest = text.partition("\n")
    return f"{title}\n\n{HEADER[page.lang].format(chapter=chapter)}\n{rest}"


def chapter_notebook(page: Page, chapter: str):
    """The notebook (nbformat) of one chapter page, with a Python 3 kernel."""
    notebook = jupytext.reads(chapter_markdown(page, chapter), fmt="md")
    notebook.metadata["kernelspec"] = KERNEL
    notebook.metadata.pop("jupytext", None)
    return notebook


def embed_figures(notebook, lang: str):
    """Figures as cell attachments, so the downloaded notebook shows them without the site."""
    from qkvsite.figures import load_all, render

    load_all()
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for name in re.findall(r"\]\(\.\./\.\./figures/([\w-]+)\.svg\)", cell.source):
            cell.source = cell.source.replace(f"](../../figures/{name}.svg)", f"](attachment:{name}.svg)")
            cell.setdefault("attachments", {})[f"{name}.svg"] = {"image/svg+xml": render(name, lang).decode()}
    return notebook


def write_if_changed(path, content: str) -> bool:
    """Write only when the content changed, so `mkdocs serve` does not rebuild forever."""
    if path.exists() and path.read_text(encoding="utf-8") == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return True


def write_notebooks(docs_dir: Path, snippet_settings: dict | None = None) -> list[Path]:
    """docs/notebooks/<chapter>.<lang>.md (rendered by mkdocs-jupyter) and .ipynb (the download)."""
    written = []
    for chapter in config.chapters():
        for lang in config.languages():
            page = Page(docs_dir / f"{chapter}.{lang}.md", settings=snippet_settings)
            notebook = chapter_notebook(page, chapter)
            files = {
                "md": jupytext.writes(notebook, fmt="md"),  # rendered on the site, figures linked
                "ipynb": jupytext.writes(embed_figures(notebook, lang), fmt="ipynb"),  # the download
            }
            for ext, content in files.items():
                path = docs_dir / "notebooks" / f"{chapter}.{lang}.{ext}"
                if write_if_changed(path, content):
                    written.append(path)
    return written
