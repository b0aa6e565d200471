"""Notebook edition of the chapters, generated from the chapter pages and executed once per chapter.

A chapter page (``docs/<chapter>.<lang>.md``) becomes a notebook: its prose
becomes Markdown cells and its Python blocks, with their ``--8<--`` includes
expanded, become code cells. The code therefore comes from the same
``snippets/`` sections as the page and is never kept twice. Printed outputs
shown on the page are dropped: the notebook's outputs are the ones its own
execution produces.

Both languages have the same code cells, so a chapter's code is executed once,
top to bottom in a fresh Jupyter kernel (nbclient; an error fails the build),
and both editions get those outputs. The outputs are cached in
``.cache/notebook-runs/`` under a key made of the code, the torch and Python
versions and the device; an entry whose key, shape or checksum does not match
is never used, it is executed again. The executed notebooks are written to
``docs/notebooks/`` (git-ignored; ``mkdocs serve`` does not watch it) for
mkdocs-jupyter to render, as soon as the executions are done; the download is
the same notebook with its figures attached, written once they are drawn.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import tempfile
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import jupytext
import nbformat

from qkvsite import config, figure_cache
from qkvsite.cache import write_atomically
from qkvsite.dialect import MARKER, Page

HEADER = {
    "zh": "本笔记本由[本章页面](../../{chapter}/)自动生成，代码与页面上的代码块完全相同。"
    "可以[下载 .ipynb 文件]({chapter}.ipynb)，在 Jupyter 或 Colab 里从上到下运行。",
    "en": "This notebook is generated from [the chapter page](../../{chapter}/); its code is the page's code. "
    "[Download the .ipynb file]({chapter}.ipynb) to run it top to bottom in Jupyter or Colab.",
}

KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}

ADMONITION = re.compile(r'^(?:!!!|\?\?\?\+?) \w+(?: "([^"]*)")?\n((?:(?:    .*)?\n)*)', re.M)
PAGE_LINK = re.compile(r"\]\(([\w-]+)\.md(#[^)]*)?\)")
ATTRS = re.compile(r'[ \t]*\{ *#([\w-]+)(?: +[\w-]+="[^"]*")* *\}')  # {#q8}, { #id data-toc-label="..." }
# a heading's explicit anchor becomes an anchor of the notebook too: Jupyter derives its own from the heading's
# text, which with a formula in it is not the page's, and links within a chapter ("#36-why-divide-by-d_k") point
# at the page's
HEADING = re.compile(r"^#{1,6} .*$", re.M)
HEADING_ATTRS = re.compile(r"^(#{1,6} .*?)" + ATTRS.pattern + r"[ \t]*$", re.M)


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
        elif MARKER.match(lines[i]):
            i += 1
        else:
            out.append(lines[i])
            i += 1
    text = "\n".join(out)
    text = ADMONITION.sub(_quote_admonition, text)
    text = PAGE_LINK.sub(_page_link, text)
    text = HEADING_ATTRS.sub(r'<a id="\2"></a>\n\n\1', text)
    text = ATTRS.sub("", text)
    # a notebook page's table of contents (mkdocs-jupyter) drops a heading's code spans: keep their text
    text = HEADING.sub(lambda m: m[0].replace("`", ""), text)
    title, _, rest = text.partition("\n")
    return f"{title}\n\n{HEADER[page.lang].format(chapter=chapter)}\n{rest}"


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
    "zh": "本笔记本需要 torch ≥ {torch}（Python ≥ {python}）：没有安装时在这里安装（Colab 已经装好）",
    "en": "This notebook needs torch >= {torch} (Python >= {python}): installed here if missing (Colab has it)",
}


def setup_cell(lang: str) -> str:
    """The first code cell: the torch the examples need (the oldest supported, from .ci/torch-versions)."""
    torch_version, python = config.oldest_supported()
    comment = SETUP_COMMENT[lang].format(torch=torch_version, python=python)
    torch_tuple = ", ".join(torch_version.split("."))
    return SETUP.format(comment=comment, torch=torch_version, torch_tuple=torch_tuple)


def chapter_notebook(page: Page, chapter: str):
    """The notebook (nbformat) of one chapter page, with a Python 3 kernel and stable cell ids.

    Its first code cell checks (or installs) the torch the examples need; the
    other code cells are the page's Python blocks.
    """
    if re.match(r"^[ \t\f]*#.*?coding[:=]", page.title and f"# {page.title}"):
        raise ValueError(f"{page.path}: jupytext reads the title {page.title!r} as a source encoding; reword it")
    notebook = jupytext.reads(chapter_markdown(page, chapter), fmt="md")
    notebook.metadata["kernelspec"] = KERNEL
    notebook.metadata.pop("jupytext", None)
    first_code = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    notebook.cells.insert(first_code, nbformat.v4.new_code_cell(setup_cell(page.lang)))
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"  # nbformat's ids are random: the same chapter must give the same file
    return notebook


def code_of(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def page_code_of(notebook) -> list[str]:
    """The code cells that are the page's blocks: all but the setup cell."""
    return code_of(notebook)[1:]


def embed_figures(notebook, lang: str):
    """A copy with the figures as cell attachments (light scheme), so the download shows them without the site."""
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        cell.source = re.sub(r"!\[[^\]]*\]\(\.\./\.\./figures/[\w-]+\.dark\.svg#only-dark\)", "", cell.source)
        for name in re.findall(r"\]\(\.\./\.\./figures/([\w-]+)\.svg#only-light\)", cell.source):
            cell.source = cell.source.replace(f"](../../figures/{name}.svg#only-light)", f"](attachment:{name}.svg)")
            cell.setdefault("attachments", {})[f"{name}.svg"] = {"image/svg+xml": figure_cache.svg(name, lang).decode()}
    return notebook


def write_if_changed(path: Path, content: str) -> bool:
    """Write only when the content changed: an unchanged file keeps mkdocs-jupyter's cache entry."""
    if path.exists() and path.read_text(encoding="utf-8") == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return True


# --- where readers find them: the download, and Colab (which opens notebooks from GitHub only) ----------

COLAB_BRANCH = "notebooks"  # the Pages workflow publishes the downloads there: <lang>/<chapter>.ipynb


def published_path(chapter: str, lang: str) -> str:
    return f"{lang}/{chapter}.ipynb"


def colab_url(repo_url: str, chapter: str, lang: str) -> str | None:
    """Open in Colab: the published notebook on GitHub's branch COLAB_BRANCH; None for another host."""
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)/?", repo_url or "")
    if not match:
        return None
    path = published_path(chapter, lang)
    return f"https://colab.research.google.com/github/{match[1]}/{match[2]}/blob/{COLAB_BRANCH}/{path}"


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


# --- executing each chapter once -------------------------------------------

CACHE = config.ROOT / ".cache"
RUNS = CACHE / "notebook-runs"
GENERATED = config.DOCS  # notebooks/ in it is generated and git-ignored; `mkdocs serve` does not watch it
RUN_FORMAT = 2  # change to execute every chapter again


def run_key(code: list[str]) -> str:
    """What a chapter's outputs depend on: its code, torch, Python and the device."""
    material = {
        "format": RUN_FORMAT,
        "code": code,
        "torch": config.torch_version(),
        "python": platform.python_version(),
        "device": config.example_device(),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _checksum(key: str, outputs: list) -> str:
    return hashlib.sha256((key + json.dumps(outputs, sort_keys=True)).encode()).hexdigest()


def cached_outputs(chapter: str, key: str, cells: int) -> list | None:
    """The outputs of an earlier run of exactly this code, or None: a stale, edited or broken entry is not used."""
    try:
        entry = json.loads((RUNS / f"{chapter}.json").read_text(encoding="utf-8"))
        outputs = entry["outputs"]
        valid = entry["key"] == key and len(outputs) == cells and entry["checksum"] == _checksum(key, outputs)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return outputs if valid else None


def store_outputs(chapter: str, key: str, outputs: list) -> None:
    entry = {"key": key, "outputs": outputs, "checksum": _checksum(key, outputs)}
    write_atomically(RUNS / f"{chapter}.json", json.dumps(entry, ensure_ascii=False))


def execute(code: list[str]) -> list:
    """Run the cells top to bottom in a fresh kernel (``qkvsite.kernel``) in an empty directory: each cell's outputs."""
    from nbclient import NotebookClient

    from qkvsite.kernel import PreloadedKernelManager

    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": KERNEL})
    notebook.cells = [nbformat.v4.new_code_cell(source, id=f"cell-{i}") for i, source in enumerate(code)]
    with tempfile.TemporaryDirectory() as empty:
        client = NotebookClient(
            notebook,
            timeout=600,
            kernel_name="python3",
            kernel_manager_class=PreloadedKernelManager,  # forked with torch imported: no import per chapter
            allow_errors=False,
            resources={"metadata": {"path": empty}},
            shutdown_kernel="immediate",  # the outputs are in: a graceful shutdown only waits (about a second)
        )
        client.execute()
    return [coalesce_streams(cell.outputs) for cell in notebook.cells]


def coalesce_streams(outputs: list) -> list:
    """One output per run of prints to the same stream: the kernel may send a line in pieces."""
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if previous and output.output_type == previous.output_type == "stream" and output.name == previous.name:
            previous.text += output.text
        else:
            merged.append(output)
    return merged


@dataclass
class Edition:
    """One chapter's notebook in one language: the page mkdocs-jupyter renders, and the download.

    Both are files under GENERATED: the page ``notebooks/<chapter>.<lang>.ipynb`` (served at
    ``notebooks/<chapter>/``) and the download ``notebooks/<chapter>/<chapter>.<lang>.ipynb``
    (served next to it as ``<chapter>.ipynb``), each language's under its own prefix.
    """

    chapter: str
    lang: str

    @property
    def page(self) -> str:
        return f"notebooks/{self.chapter}.{self.lang}.ipynb"

    @property
    def download(self) -> str:
        return f"notebooks/{self.chapter}/{self.chapter}.{self.lang}.ipynb"


def with_outputs(notebook, outputs: list, key: str):
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))  # a copy
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for count, (cell, cell_outputs) in enumerate(zip(code, outputs, strict=True), start=1):
        cell.execution_count = count
        cell.outputs = [nbformat.from_dict(output) for output in cell_outputs]
        for output in cell.outputs:
            if "execution_count" in output:
                output.execution_count = count
    notebook.metadata["qkv"] = {"run": key}
    return notebook


def strip_comment(code: str) -> str:
    return "\n".join(line for line in code.split("\n") if not line.startswith("# "))


ABSOLUTE = re.compile(r"\]\((?:\.\./)+")


def absolute_links(notebook, site_url: str, lang: str):
    """A copy whose links to the site are absolute: a downloaded notebook has no site around it."""
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    root = site_url.rstrip("/") + "/" + config.url_prefix(lang)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = ABSOLUTE.sub(f"]({root}", cell.source)
    return notebook


# chapter -> (digest of what its files were made from, {lang: (page file, download file)}): under `mkdocs serve`,
# a rebuild after an edit makes again only the chapters whose page or code changed
_made: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {}

# The same for a new process (a warm `mkdocs build`): each chapter's made files are vouched for by that digest,
# by their own checksums and by those of the figures the downloads embed, as the figure cache holds them; a
# chapter where any of these differs is made again.
MADE = CACHE / "notebooks-made.json"


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def made_from(snippet_settings, site_url: str) -> dict[str, str]:
    """Per chapter, a digest of what its notebook files are made from: its pages, the code of the examples and of
    the tooling (which makes the notebooks and draws the figures they embed), the settings, and the versions the
    outputs depend on."""
    sources = [p for root in ("snippets", "qkvsite") for p in sorted((config.ROOT / root).rglob("*.py"))]
    common = [*(p.read_bytes() for p in sources), (config.ROOT / "mkdocs.yml").read_bytes()]
    common += [repr(snippet_settings), site_url, config.torch_version(), platform.python_version()]
    common += [config.example_device(), *(version(name) for name in ("jupytext", "nbformat", "matplotlib"))]
    common_digest = _sha(b"\0".join(m if isinstance(m, bytes) else m.encode() for m in common)).encode()
    pages = lambda chapter: [(config.DOCS / f"{chapter}.{lang}.md").read_bytes() for lang in config.languages()]
    return {chapter: _sha(b"\0".join([common_digest, *pages(chapter)])) for chapter in config.chapters()}


def _made_on_disk(chapter: str, digest: str, entries: dict) -> dict[str, tuple[str, str]] | None:
    """The chapter's files as an earlier process made them from ``digest`` (``entries``: MADE), or None."""
    try:
        entry = entries[chapter]
        if entry["from"] != digest:
            return None
        files = {}
        for lang in config.languages():
            edition = Edition(chapter, lang)
            texts = [(GENERATED / path).read_text(encoding="utf-8") for path in (edition.page, edition.download)]
            if [_sha(text) for text in texts] != entry["files"][lang]:
                return None  # edited, cut short, or made by another build since
            if _embedded(texts[1], lang) != entry["figures"][lang]:
                return None  # a figure it embeds was drawn again since (one that shows a time measured, say)
            files[lang] = tuple(texts)
        return files
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_made() -> dict:
    try:
        entries = json.loads(MADE.read_text(encoding="utf-8"))
        return entries if isinstance(entries, dict) else {}
    except (OSError, ValueError):
        return {}


def _embedded(download: str, lang: str) -> dict[str, str | None]:
    """Each figure a download embeds, with a checksum of its drawing in the figure cache now (None: not there)."""
    checksums = {}
    for name in sorted(set(re.findall(r"\(attachment:([\w-]+)\.svg\)", download))):
        path = figure_cache.cached_path(name, *figure_cache.registered()[name], lang, "light")
        checksums[name] = _sha(path.read_bytes()) if path.is_file() else None
    return checksums


def _write_made(digests: dict[str, str]) -> None:
    entries = {
        chapter: {
            "from": digest,
            "files": {lang: [_sha(t) for t in texts] for lang, texts in _made[chapter][1].items()},
            "figures": {lang: _embedded(texts[1], lang) for lang, texts in _made[chapter][1].items()},
        }
        for chapter, digest in digests.items()
    }
    write_atomically(MADE, json.dumps(entries, indent=1).encode())


def build_notebooks(
    snippet_settings: dict | None = None,
    workers: int | None = None,
    site_url: str = "http://127.0.0.1:8000/",
    figures_ready: Callable[[], None] = lambda: None,
    pages_ready: Callable[[list[Edition]], None] = lambda editions: None,
) -> list[Edition]:
    """Every chapter's notebook in every language, executed (or taken from the run cache).

    The page's own links are relative; the download's are absolute, to ``site_url``. Once the executions are
    done, the pages are written and ``pages_ready`` is called with their editions (they can be rendered while
    the figures are still being drawn); the downloads embed the figures: ``figures_ready`` is called before the
    first figure is needed.
    """
    digests, on_disk = made_from(snippet_settings, site_url), _read_made()
    for chapter in config.chapters():
        if chapter not in _made and (files := _made_on_disk(chapter, digests[chapter], on_disk)):
            _made[chapter] = (digests[chapter], files)
    todo = [chapter for chapter in config.chapters() if _made.get(chapter, (None,))[0] != digests[chapter]]
    notebooks = {
        (chapter, lang): chapter_notebook(
            Page(config.DOCS / f"{chapter}.{lang}.md", settings=snippet_settings), chapter
        )
        for chapter in todo
        for lang in config.languages()
    }
    runs = {}
    for chapter in todo:
        codes = {lang: code_of(notebooks[chapter, lang]) for lang in config.languages()}
        # the setup cell's comment is in the page's language; the code it runs is the same
        codes = {lang: [strip_comment(code[0]), *code[1:]] for lang, code in codes.items()}
        code = codes[config.default_language()]
        if any(other != code for other in codes.values()):
            raise ValueError(f"{chapter}: the editions' code differs; both must include the same sections")
        key = run_key(code)
        runs[chapter] = (code, key, cached_outputs(chapter, key, len(code)))
    missing = [chapter for chapter, (_, _, outputs) in runs.items() if outputs is None]
    with ThreadPoolExecutor(max_workers=workers or min(2, os.cpu_count() or 1)) as pool:
        for chapter, outputs in zip(missing, pool.map(lambda c: execute(runs[c][0]), missing), strict=True):
            code, key, _ = runs[chapter]
            store_outputs(chapter, key, outputs)
            runs[chapter] = (code, key, outputs)
    executed = {
        (chapter, lang): with_outputs(notebooks[chapter, lang], runs[chapter][2], runs[chapter][1])
        for chapter in todo
        for lang in config.languages()
    }
    pages = {key: nbformat.writes(notebook) for key, notebook in executed.items()}
    editions = [Edition(chapter, lang) for chapter in config.chapters() for lang in config.languages()]
    for edition in editions:
        key = (edition.chapter, edition.lang)
        page = pages[key] if key in pages else _made[edition.chapter][1][edition.lang][0]  # made before
        write_if_changed(GENERATED / edition.page, page)
    pages_ready(editions)
    figures_ready()
    for chapter in todo:
        files = {}
        for lang in config.languages():
            download = absolute_links(embed_figures(executed[chapter, lang], lang), site_url, lang)
            files[lang] = (pages[chapter, lang], nbformat.writes(download))
        _made[chapter] = (digests[chapter], files)
    for edition in editions:
        write_if_changed(GENERATED / edition.download, _made[edition.chapter][1][edition.lang][1])
    if todo:
        _write_made(digests)
    return editions


# --- the notebook pages, rendered as mkdocs-jupyter renders them --------------------------------

# mkdocs-jupyter's options that its rendering (convert.nb2html) takes, under the names of its config
RENDER_OPTIONS = (
    "execute", "kernel_name", "theme", "allow_errors", "show_input", "no_input", "no_prompt", "remove_tag_config",
    "highlight_extra_classes", "include_requirejs", "custom_mathjax_url",
)  # fmt: skip


NO_ALT = "No description has been provided for this image"  # nbconvert's words
FOCUSABLE = re.compile(r'<div class="(?:[^"]* )?jp-(?:Cell-inputWrapper|OutputArea-output)(?: [^"]*)?"')
IMG_WITHOUT_ALT = re.compile(r"<img(?![^>]*\balt=)")


class MarkedPage:
    """What nbconvert's HTMLExporter does with BeautifulSoup, done on the page's text.

    After rendering a notebook, nbconvert parses the page with BeautifulSoup, gives every image without alt text
    nbconvert's own, makes the cells' inputs and outputs focusable (tabindex="0": a keyboard can scroll them), and
    writes the page out again: a third of each page's rendering. Here it stands in for BeautifulSoup in nbconvert's
    HTMLExporter: the same attributes, added to the rendered text as it is (a test compares the two pages' trees).
    """

    def __init__(self, html: str, features: str | None = None):
        self.html = html

    def select(self, selector: str) -> list:
        return []  # nothing for nbconvert to change: __str__ has done it

    def __str__(self) -> str:
        marked = FOCUSABLE.sub(lambda m: m[0] + ' tabindex="0"', self.html)
        return IMG_WITHOUT_ALT.sub(f'<img alt="{NO_ALT}"', marked)


def set_up_rendering(templates_dir: str) -> None:
    """mkdocs-jupyter as the site renders with it, in this process: the site's page template, the pages' lighter
    highlighting, compiled templates kept, no BeautifulSoup pass (``MarkedPage``). The build
    (qkvsite.hooks.notebooks) and its render workers call it."""
    import mkdocs_jupyter.config
    import nbconvert.exporters.html

    from qkvsite.highlight import lighter_notebooks
    from qkvsite.hooks.render_cache import cache_nbconvert_templates

    mkdocs_jupyter.config.settings.templates_dir = templates_dir  # read by mkdocs-jupyter at each rendering
    lighter_notebooks()
    cache_nbconvert_templates()
    nbconvert.exporters.html.BeautifulSoup = MarkedPage


def render_page(path: str, options: dict, templates_dir: str) -> dict:
    """What mkdocs-jupyter caches for the notebook page at ``path``: its HTML, contents and title, made by its
    own functions with its config's ``options`` (and ``toc_depth``); callable in a worker process."""
    from mkdocs_jupyter import convert
    from mkdocs_jupyter.plugin import _get_nb_toc_tokens

    set_up_rendering(templates_dir)
    body = convert.nb2html(path, **{name: options[name] for name in RENDER_OPTIONS})
    toc_tokens, title = _get_nb_toc_tokens(path, options["toc_depth"])
    return {"content": body, "toc_tokens": toc_tokens, "title": title}


if __name__ == "__main__":  # python -m qkvsite.notebooks publish <site dir> <out dir>
    import sys

    if len(sys.argv) != 4 or sys.argv[1] != "publish":
        sys.exit("usage: python -m qkvsite.notebooks publish <site dir> <out dir>")
    for path in publish(Path(sys.argv[2]), Path(sys.argv[3])):
        print(path)
