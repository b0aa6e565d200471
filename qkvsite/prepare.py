"""The prepare stage: what the pages need made before MkDocs renders them.

    .venv/bin/python -m qkvsite.prepare     # make what the cache lacks, then stop

Four makers, each asked the same two things: what is ``missing`` from the cache, and to ``make``
it. The figures, the widgets' data and the link-preview cards are made in two worker processes
(``qkvsite.workers``) while the chapters' notebooks run in Jupyter kernels; then each chapter's
notebook page and download is written to ``docs/notebooks/`` (the one place this stage writes files,
besides the cache). The pages read what was made from the cache: a figure from
``Figures.drawings``, a widget's JSON and a card from ``qkvsite.widgets`` and ``qkvsite.cards``, a
notebook from ``docs/notebooks/``.

The build calls ``prepare`` from its first pass (``qkvsite.plugin``); a warm cache makes it cheap.
Run as a command, it makes the same things with mkdocs.yml's settings, so that a build after it
only renders. Under ``mkdocs serve`` a rebuild makes again only what an edit changed.
"""

from __future__ import annotations

import logging
import time
from contextlib import nullcontext

from qkvsite import cards, figure_cache, notebook_runs, widgets, workers
from qkvsite import config as site
from qkvsite.cache import key

log = logging.getLogger("mkdocs.plugins.qkv")

Job = tuple[str, str, list]  # (module, function, its argument): run in a worker process


class Figures:
    """Every figure in every language and scheme (``qkvsite.figure_cache``)."""

    def __init__(self) -> None:
        from qkvsite.hooks.figures import draw_now

        self.drawings = figure_cache.Drawings(site.languages(), draw=draw_now)

    def missing(self) -> list[Job]:
        """One job per example: its figures share one run of it."""
        by_example: dict[str, list] = {}
        for name, lang in self.drawings.missing():
            by_example.setdefault(self.drawings.figures[name][0], []).append((name, lang))
        groups = sorted(by_example.values(), key=len, reverse=True)
        return [("qkvsite.figures", "draw", group) for group in groups]


class Widgets:
    """The data of every figure a reader can move, in every language (``qkvsite.widgets``)."""

    def missing(self) -> list[Job]:
        """One job per widget: its languages share one run of its example."""
        by_widget: dict[str, list] = {}
        for name, lang in widgets.missing(site.languages()):
            by_widget.setdefault(name, []).append((name, lang))
        return [("qkvsite.widgets", "make", todo) for todo in by_widget.values()]


class Cards:
    """The link-preview card of every page in every language (``qkvsite.cards``)."""

    def __init__(self, wanted: list[tuple[str, str, str]]) -> None:
        self.wanted = wanted  # (title, site name, language)

    def missing(self) -> list[Job]:
        todo = [card for card in self.wanted if not cards.CACHE.has(cards.card_key(*card))]
        return [("qkvsite.cards", "draw", todo)] if todo else []


class Notebooks:
    """Each chapter as a notebook, executed, in both languages (``qkvsite.notebook_runs``).

    A chapter is made again when anything it is made from changed since this process last made it
    (the snippets, its pages, mkdocs.yml, the links, the figures it shows) or when its files on disk
    are not what this process wrote (another build wrote them): ``mkdocs serve`` re-runs only the
    chapters an edit changed. A run is itself cached by its code (``notebook_runs.RUNS``).
    """

    made: dict[str, tuple[tuple[str, str], str]] = {}  # chapter -> (made from, on disk), its run

    def __init__(self, site_url: str, repo_url: str, drawings: figure_cache.Drawings) -> None:
        self.site_url, self.repo_url, self.drawings = site_url, repo_url, drawings
        snippets = sorted((site.ROOT / "snippets").rglob("*.py"))
        common = key(
            *snippets,
            site.MKDOCS_YML,
            site_url,
            repo_url,
            sorted(drawings.keys.values()),
            notebook_runs.run_key([]),
        )
        self.made_from = {
            chapter: key(common, *(site.DOCS / f"{chapter}.{lang}.md" for lang in site.languages()))
            for chapter in site.chapters()
        }

    def missing(self) -> list[str]:
        todo = []
        for chapter, made_from in self.made_from.items():
            if self.made.get(chapter, (None,))[0] == (made_from, on_disk(chapter)):
                # still this build's run: not evicted
                notebook_runs.RUNS.keep(self.made[chapter][1])
            else:
                todo.append(chapter)
        return todo

    def run(self, todo: list[str]) -> tuple[dict, dict]:
        """Run the chapters' notebooks (in kernels, in this process's threads): the notebooks and
        their runs, for ``write``."""
        chapter_notebooks = notebook_runs.chapter_notebooks(todo, repo_url=self.repo_url)
        return chapter_notebooks, notebook_runs.run_chapters(chapter_notebooks)

    def write(self, chapter_notebooks: dict, runs: dict) -> None:
        """Write the notebooks that ``run`` ran. Their downloads embed the chapters' figures: call
        it once the figures are drawn, or it draws them again in this process."""
        notebook_runs.write_notebooks(chapter_notebooks, runs, self.site_url, self.drawings.svg)
        for chapter in runs:
            self.made[chapter] = ((self.made_from[chapter], on_disk(chapter)), runs[chapter][0])


def on_disk(chapter: str) -> str:
    """A chapter's notebook files as they are now (another build may have written them, with other
    links)."""
    editions = [notebook_runs.Edition(chapter, lang) for lang in site.languages()]
    files = [notebook_runs.generated() / path for e in editions for path in (e.page, e.download)]
    return key(*files)


def prepare(
    site_url: str, repo_url: str, wanted_cards: list[tuple[str, str, str]]
) -> figure_cache.Drawings:
    """Make what the cache lacks: the figures, widgets and cards in worker processes while the
    notebooks run; return the figures' drawings, for the pages."""
    figures = Figures()
    chapters = Notebooks(site_url, repo_url, figures.drawings)
    jobs = figures.missing() + Widgets().missing() + Cards(wanted_cards).missing()
    todo = chapters.missing()
    start = time.perf_counter()
    with workers.pool() if jobs else nullcontext() as pool:
        drawn = [pool.apply_async(workers.call, job) for job in jobs]
        ran = chapters.run(todo)
        executed = time.perf_counter() - start
        for each in drawn:
            each.get()
    chapters.write(*ran)  # after the figures it embeds are in the cache
    if jobs or executed > 1:
        log.info(
            f"qkv: {len(todo)} notebooks made in {executed:.1f} s; "
            f"{sum(len(job[2]) for job in jobs)} figures, widgets and cards made by "
            f"{time.perf_counter() - start:.1f} s"
        )
    return figures.drawings


def main() -> None:
    """Prepare with mkdocs.yml's settings, as a build would, and stop."""
    from qkvsite.hooks.social import every_card
    from qkvsite.hooks.sources import repo_from_git_remote

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    config = site.settings()
    repo_from_git_remote(config)  # as the plugin's on_config sets it
    prepare(config.site_url, config.repo_url, every_card())


if __name__ == "__main__":
    main()
