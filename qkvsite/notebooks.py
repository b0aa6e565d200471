"""Notebook edition of the chapters, generated from the chapter pages and executed once per chapter.

A chapter page (``docs/<chapter>.<lang>.md``) becomes a notebook: its prose Markdown cells, its
Python blocks (includes expanded) code cells, so the code comes from the same ``snippets/``
sections and is never kept twice. The page's printed outputs are dropped: the notebook shows
those of its own run.

Running them and writing their files is ``qkvsite.notebook_runs``; this module makes a
notebook from a page, and publishes the downloads where Colab finds them.
"""

from __future__ import annotations

import html
import itertools
import json
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import jupytext
import nbformat
from markdown.extensions.toc import slugify

from qkvsite import config
from qkvsite.cjk import join_cjk_lines
from qkvsite.dialect import MARKER, Page, scan, version_tuple

TITLE = {"zh": "笔记本：{}", "en": "Notebook: {}"}
WIDGET = re.compile(r'^<div class="qkv-widget"[^>]*></div>\s*$')  # see qkvsite.hooks.widgets
HEADER = {
    "zh": "这是第 {number} "
    "章的笔记本：代码与[本章页面](../../{chapter}/)的代码块相同，输出是它运行一次的结果。",
    "en": "Chapter {number} as a notebook: the code of [the chapter page](../../{chapter}/) with "
    "the outputs of a run.",
}
# the notebook page's buttons (raw HTML: a Markdown link has no download attribute); the download
# says how to run it
BUTTONS = {"zh": ("下载 .ipynb", "在 Colab 中打开"), "en": ("Download the .ipynb", "Open in Colab")}
RUN_IT = {
    "zh": "在 Jupyter 或 Colab 里从上到下依次运行各单元；第一个代码单元检查 torch 是否已安装。",
    "en": "Run the cells from top to bottom in Jupyter or Colab; the first code cell checks that "
    "torch is installed.",
}


def buttons(chapter: str, lang: str, colab: str | None) -> str:
    download, open_in_colab = BUTTONS[lang]
    links = [f'<a class="md-button" href="{chapter}.ipynb" download>{download}</a>']
    links += [f'<a class="md-button" href="{colab}">{open_in_colab}</a>'] if colab else []
    return '<p class="qkv-notebook-links">' + " ".join(links) + "</p>"


KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}

ADMONITION = re.compile(r'^(!!!|\?\?\?\+?) (\w+)(?: "([^"]*)")?\n((?:(?:    .*)?\n)*)', re.M)
PAGE_LINK = re.compile(r"\]\(([\w-]+)\.md(#[^)]*)?\)")
ATTRS = re.compile(
    r'[ \t]*\{ *#([\w-]+)(?: +[\w-]+="[^"]*")* *\}'
)  # {#q8}, { #id data-toc-label="..." }
# a heading's explicit anchor becomes an anchor of the notebook too: Jupyter derives its own from
# the heading's text, which with a formula in it is not the page's, and links within a chapter
# ("#36-why-divide-by-d_k") point at the page's
HEADING = re.compile(r"^#{1,6} .*$", re.M)
HEADING_ATTRS = re.compile(r"^(#{1,6} .*?)" + ATTRS.pattern + r"[ \t]*$", re.M)
SECTION_LINK = re.compile(r"\]\(#([^)\s]+)\)")


def _admonition(match: re.Match) -> str:
    """An admonition becomes an ``<aside>`` of Material's classes (the notebook page draws it as the
    chapter page does; not a ``<div>``, which would end the Markdown cell's for
    ``typeset_notebook``), a collapsible one (``???``) a ``<details>``; one that holds code is just
    dedented (code must stay a cell)."""
    marker, kind, title, body = match[1], match[2], match[3], textwrap.dedent(match[4]).strip("\n")
    if "```" in body:
        return "\n".join(([f"**{title}**", ""] if title else []) + body.split("\n")) + "\n\n"
    title = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(title or "", quote=False))
    if marker == "!!!":
        return (
            f'<aside class="admonition {kind}"><p '
            f'class="admonition-title">{title}</p>\n\n{body}\n\n</aside>\n\n'
        )
    opened = " open" if marker == "???+" else ""
    return f'<details class="{kind}"{opened}><summary>{title}</summary>\n\n{body}\n\n</details>\n\n'


def _page_link(match: re.Match) -> str:
    name, anchor = match.group(1), match.group(2) or ""
    return f"](../../{'' if name == 'index' else name + '/'}{anchor})"


def chapter_markdown(page: Page, chapter: str, colab: str | None = None) -> str:
    """The Jupytext Markdown notebook of one chapter page.

    Python blocks become code cells (their includes expanded), printed outputs and markers go
    (the notebook shows its own outputs), a figure's caption becomes an italic line under it.
    """
    lines = page.text.split("\n")
    replace: dict[int, tuple[int, list[str]]] = {}  # first line -> (last line, new lines)
    if front := page.text[: len(page.text) - len(page.body)]:
        replace[0] = (
            front.count("\n") - 1,
            [],
        )  # the front matter is the site's, not the notebook's
    for block in page.blocks:
        fence = block.fence
        code = [
            fence.indent + line if line else line for line in block.code.rstrip("\n").split("\n")
        ]
        replace[fence.start] = (
            fence.end,
            [f"{fence.indent}```python", *code, f"{fence.indent}```"],
        )
        if block.output:
            replace[block.output.start] = (block.output.end, [])
    for figure in page.figures:
        start = figure.lineno - 1
        # both schemes; Material's CSS shows the one of the page's scheme (img[src$="#only-dark"])
        image = f"![{figure.alt}](../../figures/{figure.name}.svg#only-light)"
        image += f"![{figure.alt}](../../figures/{figure.name}.dark.svg#only-dark)"
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
        elif MARKER.match(lines[i]) or WIDGET.match(lines[i]):
            i += 1  # a marker is the page's; a widget needs the site's script and data
        else:
            out.append(lines[i])
            i += 1
    text = "\n".join(out)
    if page.lang == "zh":  # as the chapter page shows it: no space where a line breaks
        text = join_cjk_lines(text)
    text = ADMONITION.sub(_admonition, text)
    text = PAGE_LINK.sub(_page_link, text)
    text = HEADING_ATTRS.sub(r'<a id="\2"></a>\n\n\1', text)
    text = ATTRS.sub("", text)
    # a section link leads to the chapter page (a notebook's headings have other ids) unless the
    # anchor is kept here
    kept = set(re.findall(r'<a id="([^"]+)"></a>', text))
    text = SECTION_LINK.sub(lambda m: m[0] if m[1] in kept else f"](../../{chapter}/#{m[1]})", text)
    text = _unnamed_heading_anchors(text)
    # a notebook page's table of contents (mkdocs-jupyter) drops a heading's code spans: keep their
    # text
    text = HEADING.sub(lambda m: m[0].replace("`", ""), text)
    title, _, rest = text.partition("\n")
    title = "# " + TITLE[page.lang].format(title.removeprefix("# "))
    header = HEADER[page.lang].format(chapter=chapter, number=config.chapters().index(chapter) + 1)
    return f"{title}\n\n{header}\n\n{buttons(chapter, page.lang, colab)}\n{rest}"


def _unnamed_heading_anchors(text: str) -> str:
    """A heading without an ASCII letter or digit ("小结") gets the id mkdocs-jupyter's table of
    contents links to, "_1", "_2"... (Python-Markdown's default slugify); nbconvert gives it
    none."""
    code = {i for fence in scan(text) for i in range(fence.start, fence.end + 1)}
    lines, unnamed = text.split("\n"), itertools.count(1)
    for i, line in enumerate(lines):
        if i not in code and HEADING.fullmatch(line) and not slugify(line.lstrip("#"), "-"):
            lines[i] = f'<a id="_{next(unnamed)}"></a>\n\n{line}'
    return "\n".join(lines)


SETUP = """\
# {comment}
import importlib.util

if importlib.util.find_spec("torch") is None:
    %pip install "torch>={torch}"
import torch

major, minor = (int(part) for part in torch.__version__.split(".")[:2])
assert (major, minor) >= ({torch_tuple}), f"torch {{torch.__version__}} is older than {torch}"
print("torch", torch.__version__, "| CUDA:", torch.cuda.is_available())"""

SETUP_COMMENT = {
    "zh": "本笔记本需要 torch ≥ {torch}（Python ≥ {python}）：没有安装时在这里安装（Colab "
    "已经装好）",
    "en": "This notebook needs torch >= {torch} (Python >= {python}): installed here if missing "
    "(Colab has it)",
}
NEWER = {
    "zh": "\n# 标有“# requires torch >= X.Y”的单元需要更新的 torch（本笔记本里最高 {newest}）",
    "en": "\n# cells marked `# requires torch >= X.Y` need a newer torch (up to {newest} in this "
    "notebook)",
}


def setup_cell(lang: str, newest: str | None = None) -> str:
    """The first code cell: the torch the examples need (the oldest supported, from
    .ci/torch-versions), and the newest a cell of the notebook declares."""
    torch_version, python = config.oldest_supported()
    comment = SETUP_COMMENT[lang].format(torch=torch_version, python=python)
    if newest and version_tuple(newest) > version_tuple(torch_version):
        comment += NEWER[lang].format(newest=newest)
    torch_tuple = ", ".join(torch_version.split("."))
    return SETUP.format(comment=comment, torch=torch_version, torch_tuple=torch_tuple)


def chapter_notebook(page: Page, chapter: str, colab: str | None = None):
    """The notebook (nbformat) of one chapter page, with a Python 3 kernel and stable cell ids.

    Its first code cell checks (or installs) the torch the examples need; the
    other code cells are the page's Python blocks.
    """
    if re.match(r"^[ \t\f]*#.*?coding[:=]", page.title and f"# {page.title}"):
        raise ValueError(
            f"{page.path}: jupytext reads the title {page.title!r} as a source encoding; reword it"
        )
    notebook = jupytext.reads(chapter_markdown(page, chapter, colab), fmt="md")
    notebook.metadata["kernelspec"] = KERNEL
    notebook.metadata.pop("jupytext", None)
    first_code = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    newest = max(
        (block.requires for block in page.blocks if block.requires), key=version_tuple, default=None
    )
    notebook.cells.insert(first_code, nbformat.v4.new_code_cell(setup_cell(page.lang, newest)))
    for index, cell in enumerate(notebook.cells):
        cell.id = (
            f"cell-{index}"  # nbformat's ids are random: the same chapter must give the same file
        )
    return notebook


def code_of(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def page_code_of(notebook) -> list[str]:
    """The code cells that are the page's blocks: all but the setup cell."""
    return code_of(notebook)[1:]


def embed_figures(notebook, svg: Callable[[str], bytes]):
    """A copy with the figures (``svg(name)``: the light scheme's) as cell attachments, so the
    download shows them without the site."""
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        cell.source = re.sub(
            r"!\[[^\]]*\]\(\.\./\.\./figures/[\w-]+\.dark\.svg#only-dark\)", "", cell.source
        )
        for name in re.findall(r"\]\(\.\./\.\./figures/([\w-]+)\.svg#only-light\)", cell.source):
            cell.source = cell.source.replace(
                f"](../../figures/{name}.svg#only-light)", f"](attachment:{name}.svg)"
            )
            cell.setdefault("attachments", {})[f"{name}.svg"] = {
                "image/svg+xml": svg(name).decode()
            }
    return notebook


def write_if_changed(path: Path, content: str) -> bool:
    """Write only when the content changed: an unchanged file keeps mkdocs-jupyter's cache entry."""
    if path.exists() and path.read_text(encoding="utf-8") == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return True


# --- where readers find them: the download, and Colab (which opens notebooks from GitHub only) ---

# the Pages workflow publishes the downloads there: <lang>/<chapter>.ipynb
COLAB_BRANCH = "notebooks"


def published_path(chapter: str, lang: str) -> str:
    return f"{lang}/{chapter}.ipynb"


def colab_url(repo_url: str, chapter: str, lang: str) -> str | None:
    """Open in Colab: the published notebook on GitHub's branch COLAB_BRANCH; None for another
    host."""
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)/?", repo_url or "")
    if not match:
        return None
    path = published_path(chapter, lang)
    return (
        f"https://colab.research.google.com/github/{match[1]}/{match[2]}/blob/{COLAB_BRANCH}/{path}"
    )


def publish(site_dir: Path, out_dir: Path) -> list[Path]:
    """Lay the built site's downloads out as the Colab branch holds them: <lang>/<chapter>.ipynb."""
    written = []
    for lang in config.languages():
        for chapter in config.chapters():
            source = site_dir / config.url_prefix(lang) / "notebooks" / chapter / f"{chapter}.ipynb"
            target = out_dir / published_path(chapter, lang)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
            written.append(target)
    return written


if __name__ == "__main__":  # python -m qkvsite.notebooks publish <site dir> <out dir>
    import sys

    if len(sys.argv) != 4 or sys.argv[1] != "publish":
        sys.exit("usage: python -m qkvsite.notebooks publish <site dir> <out dir>")
    for path in publish(Path(sys.argv[2]), Path(sys.argv[3])):
        print(path)
