"""MkDocs hook: the notebook edition of every chapter, generated before each build.

``snippets.notebooks`` turns each chapter page into a Jupytext Markdown
notebook (``docs/notebooks/<chapter>.<lang>.md``, rendered and executed by
mkdocs-jupyter) and the ``.ipynb`` readers download. Both are generated files
(git-ignored) and are rewritten only when their content changes.

mkdocs-jupyter caches executions by the notebook's content, so an edited
snippet (which changes the generated notebook) is executed again. It also
evicts every cache entry its build did not use; each language is a separate
build, so each gets its own cache directory and they do not evict each other.
"""

import sys
from pathlib import Path

from mkdocs.plugins import event_priority

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from snippets.notebooks import write_notebooks  # noqa: E402


@event_priority(100)  # before the files are collected
def on_pre_build(config):
    write_notebooks(Path(config.docs_dir), config.mdx_configs["pymdownx.snippets"])
    jupyter, i18n = config.plugins.get("mkdocs-jupyter"), config.plugins.get("i18n")
    if jupyter is not None and i18n is not None:
        jupyter.config["cache_dir"] = str(Path(".cache", "mkdocs-jupyter", i18n.current_language))
