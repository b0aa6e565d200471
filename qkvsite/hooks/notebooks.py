"""The notebook edition of every chapter, generated before each build (``qkvsite.notebooks``).

Each chapter page becomes a Jupytext Markdown notebook
(``docs/notebooks/<chapter>.<lang>.md``, rendered and executed by mkdocs-jupyter)
and the ``.ipynb`` readers download. Both are generated (git-ignored) and
rewritten only when their content changes.

mkdocs-jupyter caches executions by the notebook's content, so an edited
snippet (which changes the generated notebook) is executed again. It also
evicts every cache entry its build did not use; each language is a separate
build, so each gets its own cache directory and they do not evict each other.
"""

from pathlib import Path

from mkdocs.plugins import event_priority

from qkvsite.hooks import building
from qkvsite.notebooks import write_notebooks


@event_priority(100)  # before the files are collected
def on_pre_build(config):
    write_notebooks(Path(config.docs_dir))
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is not None:
        jupyter.config["cache_dir"] = str(Path(".cache", "mkdocs-jupyter", building(config)))
