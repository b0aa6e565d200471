"""Jupyter kernels that start with torch already imported: forked from a server that imported it once.

A chapter's notebook runs in a fresh IPython kernel (ipykernel, driven by
nbclient over Jupyter's protocol), one per chapter. Starting one is mostly
imports: torch and ipykernel take about a second of CPU each time, for every
chapter of every clean build. Here each kernel is a process forked from one
server (multiprocessing's forkserver) that imported them once; the kernel
itself is ipykernel's own, started on the connection file jupyter_client
wrote, in the working directory and environment it asked for. The build's
other worker processes (figures, link-preview cards, notebook pages) come from
the same server, which the build starts first thing (``start_server``). The build
waits for the kernels and the figures before it reads its pages, and for the
cards and notebook pages only later: those run at a lower priority
(``lower_priority``), on a core the others leave free, some of them while the
build's own thread makes the pages.

The server imports and does nothing else: it runs no tensor code (no thread
pool to inherit) and never touches CUDA, which a forked child could not use
after its parent had. Each kernel gets a session of its own, so that a signal
meant for it (interrupt, kill) reaches no one else, and exits when the server
does.
"""

from __future__ import annotations

import multiprocessing
import os
import uuid
from functools import cache

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner

# torch.distributed.tensor and torch._dynamo: imported by torch on first use (torch.testing.assert_close,
# torch.nn.attention.bias, an optimizer's first step), about 1.2 s of CPU in each kernel that used them
PRELOAD = ["torch", "torch.distributed.tensor", "torch._dynamo", "ipykernel.kernelapp", __name__]
# torch threads per process: a build runs two kernels and two figure workers at once, and more threads than
# cores make torch's threads wait on each other (the outputs do not depend on the count: the tests run the page
# blocks with one thread and with every core's)
THREADS = max(1, (os.cpu_count() or 1) // 4)


def use_threads(threads: int = THREADS) -> None:
    """Set torch's thread count (OpenMP read $OMP_NUM_THREADS when the server imported torch, not since)."""
    import torch

    torch.set_num_threads(threads)


LOWER_BY = 10  # niceness added to a worker whose results the build needs last


def lower_priority() -> None:
    """In a worker whose results the build needs last: it gives way to the kernels and figures."""
    os.nice(LOWER_BY)


@cache
def preloaded():
    """The multiprocessing context whose processes are forked from the server with torch imported."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


class Workers:
    """Jobs for processes forked from the server, submitted off the caller's thread.

    Forking the first process waits until the server has imported torch (seconds, early in a build); the
    build's thread goes on meanwhile. ``wait()`` returns the jobs' results in order, or raises the first error.
    """

    def __init__(self, workers: int, initializer=None):
        from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=preloaded(), initializer=initializer)
        self.submitting = ThreadPoolExecutor(max_workers=1)
        self.jobs = []

    def submit(self, function, *args) -> None:
        self.jobs.append(self.submitting.submit(self.pool.submit, function, *args))

    def wait(self) -> list:
        try:
            return [submitted.result().result() for submitted in self.jobs]
        finally:
            self.submitting.shutdown(cancel_futures=True)
            self.pool.shutdown(cancel_futures=True)
            self.jobs = []


def start_server() -> None:
    """Start the server now, without waiting for its imports (the first process forked from it waits)."""
    from multiprocessing import forkserver

    preloaded()
    forkserver.ensure_running()


def _kernel(connection_file: str, cwd: str, env: dict[str, str]) -> None:
    """In the forked process: become the kernel jupyter_client asked for."""
    os.setsid()  # as jupyter_client starts a kernel: a session of its own, away from the terminal's Ctrl-C
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    use_threads()
    from ipykernel.kernelapp import IPKernelApp

    # the parent to outlive (its default, $JPY_PARENT_PID, was read when the server imported ipykernel)
    IPKernelApp.launch_instance(argv=["-f", connection_file, f"--IPKernelApp.parent_handle={os.getppid()}"])


class _Process:
    """The forked kernel, as the part of subprocess.Popen that LocalProvisioner uses."""

    stdin = stdout = stderr = None

    def __init__(self, process: multiprocessing.Process):
        self._process = process
        self.pid = process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int | None:
        self._process.join(timeout)
        return self._process.exitcode

    def send_signal(self, signum: int) -> None:
        if self._process.exitcode is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self._process.kill()

    def terminate(self) -> None:
        self._process.terminate()


class PreloadedProvisioner(LocalProvisioner):
    """LocalProvisioner, with the kernel forked from the preloaded server instead of started as a command."""

    async def launch_kernel(self, cmd: list[str], **kwargs) -> dict:
        connection_file = cmd[cmd.index("-f") + 1]
        cwd = str(kwargs.get("cwd") or os.getcwd())
        env = dict(kwargs.get("env") or os.environ)
        process = preloaded().Process(target=_kernel, args=(connection_file, cwd, env), daemon=True)
        process.start()
        self.process = _Process(process)
        self.pid = process.pid
        self.pgid = None  # signals go to the kernel's pid: it makes its own session, maybe not yet
        self.cwd = cwd
        return self.connection_info


class PreloadedKernelManager(AsyncKernelManager):
    """nbclient's kernel manager (``NotebookClient(kernel_manager_class=...)``) with forked kernels."""

    async def _async_pre_start_kernel(self, **kw):
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            self.provisioner = PreloadedProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)
