"""Each chapter's notebook executed once, and its files written.

Both languages have the same code, run once top to bottom in a fresh Jupyter kernel (nbclient,
two chapters at a time; an error fails the build). The outputs are entries of
``Cache("notebook-runs")`` under a key of the code, torch, Python, the device and the environment
(``run_key``). The notebooks (``qkvsite.notebooks`` makes them from the pages) are written to
``notebooks/`` in the docs directory (git-ignored, not watched by ``mkdocs serve``) for
mkdocs-jupyter, with buttons to download it and open it in Colab; the download has its figures
attached, absolute links and a line on how to run it in place of the buttons.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import platform
import re
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat

from qkvsite import config, machine
from qkvsite.cache import Cache, key
from qkvsite.dialect import Page
from qkvsite.notebooks import (
    KERNEL,
    RUN_IT,
    chapter_notebook,
    code_of,
    colab_url,
    embed_figures,
    write_if_changed,
)


def generated() -> Path:
    """Where the notebooks are written: the docs directory (their notebooks/ is generated and
    git-ignored; `mkdocs serve` does not watch it)."""
    return config.DOCS


log = logging.getLogger("mkdocs.plugins.qkv")

RUNS = Cache("notebook-runs", ".json")
AT_ONCE = 2  # chapters executed at the same time, each in its kernel


def run_key(code: list[str]) -> str:
    """What a chapter's outputs depend on: its code, torch, Python, the device and the kernels'
    environment."""
    return key(
        code,
        machine.torch_version(),
        platform.python_version(),
        machine.example_device(),
        config.EXAMPLE_ENV,
    )


def cached_outputs(key: str, cells: int) -> list | None:
    """The outputs of an earlier run of exactly this code, or None."""
    data = RUNS.get(key)
    outputs = None if data is None else json.loads(data)
    return outputs if isinstance(outputs, list) and len(outputs) == cells else None


def store_outputs(key: str, outputs: list) -> None:
    RUNS.put(key, json.dumps(outputs, ensure_ascii=False))


async def _execute(code: list[str]) -> list:
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": KERNEL})
    notebook.cells = [
        nbformat.v4.new_code_cell(source, id=f"cell-{i}") for i, source in enumerate(code)
    ]
    # the kernel's own stderr (its start-up warnings, torch's C++ logs) would land in the middle of
    # the build's output: it is kept, and shown only if the run fails
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryFile("w+") as stderr:
        client = NotebookClient(
            notebook,
            timeout=600,
            kernel_name="python3",
            allow_errors=False,
            resources={"metadata": {"path": empty}},
            # the outputs are in: a graceful shutdown only waits (about a second)
            shutdown_kernel="immediate",
        )
        try:
            # jupyter_client hands these to the kernel's Popen (KernelManager.start_kernel)
            await client.async_execute(env={**os.environ, **config.EXAMPLE_ENV}, stderr=stderr)
        except Exception:
            stderr.seek(0)
            if written := stderr.read().strip():
                log.error(f"qkv: the failed notebook kernel wrote to stderr:\n{written[-4000:]}")
            raise
    return [coalesce_streams(cell.outputs) for cell in notebook.cells]


def execute_all(
    codes: list[list[str]], at_once: int = AT_ONCE, done: Callable | None = None
) -> list[list]:
    """Run each code (a list of cells) top to bottom in a fresh kernel, ``at_once`` at a time, in an
    empty directory: each one's outputs per cell, also handed to ``done(index, outputs)`` as soon as
    it has them. A cell that raises fails it.

    The kernels' event loop runs in a thread of its own. nbclient sets SIGINT and SIGTERM handlers
    of its own only on an event loop of the main thread (they shut its kernel down and let the
    program go on), so here the build keeps Python's: SIGTERM ends it at once, Ctrl-C raises
    KeyboardInterrupt where it waits. The kernels then exit by themselves: ipykernel watches the
    process that started it ($JPY_PARENT_PID).
    """

    async def run_all():
        limit = asyncio.Semaphore(at_once)

        async def run(index, code):
            async with limit:
                outputs = await _execute(code)
            if done is not None:
                done(index, outputs)
            return outputs

        return await asyncio.gather(*(run(index, code) for index, code in enumerate(codes)))

    if not codes:
        return []
    result: dict[str, object] = {}

    def in_thread() -> None:
        try:
            result["outputs"] = asyncio.run(run_all())
        except BaseException as error:  # handed to the waiting thread
            result["error"] = error

    kernels = threading.Thread(target=in_thread, name="notebook-kernels", daemon=True)
    kernels.start()
    try:
        kernels.join()  # a signal interrupts this wait
    except KeyboardInterrupt:
        # nbclient shuts its kernels down at exit, waiting on each (seconds); they exit by
        # themselves once the build is gone, so Ctrl-C ends the build now, as SIGTERM does
        print("\nAborted while the notebooks ran.", file=sys.stderr, flush=True)
        os._exit(130)
    if "error" in result:
        raise result["error"]
    return result["outputs"]


def execute(code: list[str]) -> list:
    """Run one code (a list of cells) in a fresh kernel: its outputs per cell."""
    return execute_all([code])[0]


def coalesce_streams(outputs: list) -> list:
    """One output per run of prints to the same stream: the kernel may send a line in pieces."""
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            previous
            and output.output_type == previous.output_type == "stream"
            and output.name == previous.name
        ):
            previous.text += output.text
        else:
            merged.append(output)
    return merged


@dataclass
class Edition:
    """One chapter's notebook in one language: the page mkdocs-jupyter renders, and the download.

    Both are files under ``generated()``: the page ``notebooks/<chapter>.<lang>.ipynb`` (served at
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


def for_download(notebook, site_url: str, lang: str):
    """A copy to download: links to the site absolute (a downloaded notebook has no site around it),
    and how to run it in place of the buttons that download it."""
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    root = site_url.rstrip("/") + "/" + config.url_prefix(lang)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = ABSOLUTE.sub(f"]({root}", cell.source)
            cell.source = re.sub(
                r'<p class="qkv-notebook-links">.*?</p>', RUN_IT[lang], cell.source
            )
    return notebook


def chapter_notebooks(
    chapters: list[str], snippet_settings: dict | None = None, repo_url: str = ""
) -> dict:
    """Each chapter's notebook in every language, keyed by (chapter, language), not executed yet."""
    page = lambda chapter, lang: Page(
        config.DOCS / f"{chapter}.{lang}.md", settings=snippet_settings
    )  # noqa: E731
    return {
        (chapter, lang): chapter_notebook(
            page(chapter, lang), chapter, colab_url(repo_url, chapter, lang)
        )
        for chapter in chapters
        for lang in config.languages()
    }


def run_chapters(notebooks: dict) -> dict[str, tuple[str, list]]:
    """Each chapter's run: its key and the outputs of each code cell, executed where the cache has
    none."""
    codes = {}
    for chapter in dict.fromkeys(chapter for chapter, _ in notebooks):
        # the setup cell's comment is in the page's language; the code it runs is the same
        editions = [code_of(notebooks[chapter, lang]) for lang in config.languages()]
        editions = [[strip_comment(code[0]), *code[1:]] for code in editions]
        if any(code != editions[0] for code in editions):
            raise ValueError(
                f"{chapter}: the editions' code differs; both must include the same sections"
            )
        codes[chapter] = editions[0]
    runs = {
        chapter: (run_key(code), cached_outputs(run_key(code), len(code)))
        for chapter, code in codes.items()
    }
    missing = [chapter for chapter, (_, outputs) in runs.items() if outputs is None]

    # as soon as a chapter has run: kept if another one fails
    def store(index: int, outputs: list) -> None:
        chapter = missing[index]
        store_outputs(runs[chapter][0], outputs)
        runs[chapter] = (runs[chapter][0], outputs)

    execute_all([codes[chapter] for chapter in missing], done=store)
    return runs


def write_notebooks(
    notebooks: dict, runs: dict, site_url: str, svg: Callable[[str, str], bytes]
) -> list[Edition]:
    """Write each chapter's notebook page and download (``svg(name, lang)``: a figure they embed)
    under ``generated()``; a file whose content did not change is left as it is (mkdocs-jupyter's
    cache keeps it)."""
    editions = []
    for (chapter, lang), notebook in notebooks.items():
        edition = Edition(chapter, lang)
        executed = with_outputs(notebook, runs[chapter][1], runs[chapter][0])
        download = for_download(
            embed_figures(executed, lambda name, lang=lang: svg(name, lang)), site_url, lang
        )
        write_if_changed(generated() / edition.page, nbformat.writes(executed))
        write_if_changed(generated() / edition.download, nbformat.writes(download))
        editions.append(edition)
    return editions
