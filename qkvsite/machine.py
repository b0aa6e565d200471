"""The machine the examples run on: torch, the device they compute on, the processor.

What a measured figure or output names as the place it was measured, and what a verification
record says ran the blocks. Kept apart from the records so that a measured figure's cache key holds
this small module, not the records' code.
"""

from __future__ import annotations

import platform
import re
from functools import cache
from pathlib import Path


@cache
def torch_version() -> str:
    """The installed torch, without importing it (a warm build need not load torch); read once per
    process."""
    from importlib.metadata import version

    return version("torch")


@cache
def example_device() -> str:
    """The device the examples pick ("cuda" if torch.cuda.is_available()), told without importing
    torch: CUDA needs a CUDA build of torch and the CUDA driver library."""
    import ctypes.util

    return (
        "cpu" if "+cpu" in torch_version() or ctypes.util.find_library("cuda") is None else "cuda"
    )


def cpu_name() -> str:
    """The processor's model name (Linux), else what the platform says."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return platform.processor() or platform.machine()
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return match.group(1).strip() if match else platform.machine()


def measuring_machine() -> str:
    """The machine a measured time depends on: its processor and the device the examples compute
    on."""
    return f"{cpu_name()} {example_device()}"


def measured_on(env: dict) -> str:
    """Where a measured output was measured, as its fence names it: the GPU, or the CPU and its
    threads, then torch."""
    if env["cuda"]:
        return f"{env['cuda']['device']}, torch {env['torch']}"
    threads = f"{env['threads']} thread" + ("s" if env["threads"] != 1 else "")
    return f"{env['cpu']} ({threads}), torch {env['torch']}"


def environment() -> dict:
    """The machine and versions a run used."""
    import torch

    cuda = None
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        cuda = {
            "device": props.name,
            "capability": f"{props.major}.{props.minor}",
            "version": torch.version.cuda,
        }
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": cuda,
        "cpu": cpu_name(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability().lower(),
        "threads": torch.get_num_threads(),
        "os": f"{platform.system()} {platform.machine()}",
    }
