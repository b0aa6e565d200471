"""The build's worker processes, which never outlive it.

A clean build draws its figures and link-preview cards in two worker processes (``pool``), while the
notebooks run in their Jupyter kernels. Each worker is a fresh Python (spawned, not forked from a
build that holds threads), with one torch thread (two workers and two kernels share the cores).
``pool`` is a ``multiprocessing.Pool``: leaving its ``with`` block, normally or by an error or
Ctrl-C, terminates the workers at once. A build killed outright (SIGTERM, SIGKILL) runs no cleanup,
so each worker also watches its parent and exits as soon as it is gone (``exit_with_parent``), as
ipykernel's kernels do (jupyter_client hands them the build's pid in $JPY_PARENT_PID).
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import threading
import time

from qkvsite import config

WORKERS = 2


def exit_with_parent(parent: int, interval: float = 0.2) -> None:
    """In a worker: exit as soon as ``parent``, the process that started it, is gone (it may be
    already)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)  # no cleanup to run: the build that wanted the results is gone

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _start_worker(build: int) -> None:
    os.environ.update(config.EXAMPLE_ENV)  # read when torch is imported, later in this process
    exit_with_parent(build)


def call(module: str, function: str, *args):
    """In a worker: ``module.function(*args)``, the module imported there (the build need not import
    it)."""
    return getattr(importlib.import_module(module), function)(*args)


def pool(workers: int = WORKERS) -> multiprocessing.pool.Pool:
    return multiprocessing.get_context("spawn").Pool(
        workers, initializer=_start_worker, initargs=(os.getpid(),)
    )
