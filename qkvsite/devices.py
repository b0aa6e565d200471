"""Which device each ATen operation of a block ran on: the proof behind REQUIRE_CUDA=1.

A block passes the GPU rule when none of its floating-point compute ran off the accelerator.
Making data is not compute: factories (``torch.ones``, ``torch.tensor``), seeded random fills
(``torch.randn``, ``nn.Linear``'s initialisation), views, copies between devices
(``.to(device)``, ``.cpu()``) and reading values out (``.item()``, ``.tolist()``, printing) may
run on the CPU. So a setup block, a definition block, a view-only block or a print-only block
passes; a block that makes one tensor on the GPU and computes the rest on the CPU does not.
"""

from __future__ import annotations

from collections import Counter

import torch

# The one private module of another package the site uses: TorchDispatchMode, the hook PyTorch's
# own docs and tutorials on __torch_dispatch__ import from here (no public path exists); it is what
# sees the device of every ATen operation. tests/tooling/test_build.py fails with a clear message
# if it moves or changes.
from torch.utils._python_dispatch import TorchDispatchMode

# ops that move, copy, create or read data without computing on it (ATen names)
DATA = set(
    """
    _copy_from _copy_from_and_resize _local_scalar_dense _to_copy alias arange cat clone copy_
    detach empty empty_like empty_strided eye fill_ full full_like lift_fresh lift_fresh_copy
    linspace new_empty new_empty_strided new_full new_ones new_zeros ones ones_like resize_
    scalar_tensor set_ stack zero_ zeros zeros_like
    """.split()
)


def _tensors(tree) -> list[torch.Tensor]:
    """The tensors in an op's arguments or results (nested in tuples, lists and dicts)."""
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, dict):
        tree = list(tree.values())
    return [t for item in tree for t in _tensors(item)] if isinstance(tree, (list, tuple)) else []


def _is_data_op(func, args, kwargs) -> bool:
    if func.is_view or func.overloadpacket.__name__ in DATA:
        return True
    if torch.Tag.nondeterministic_seeded in func.tags:
        # random data: a factory (torch.randn) or a fill of its own tensor (uniform_), not dropout
        inputs = _tensors((args, kwargs))
        return not inputs or (func.overloadpacket.__name__.endswith("_") and len(inputs) == 1)
    return False


def _compute_device(inputs, outputs) -> str:
    """Where an op computed: its outputs' device; else that of its inputs (CPU scalars aside)."""
    for group in (outputs, [t for t in inputs if t.dim() > 0], inputs):
        if group:
            return group[0].device.type
    return "none"


class DeviceLog(TorchDispatchMode):
    """Counts the floating-point compute ops run inside it, by device."""

    def __init__(self):
        super().__init__()
        self.compute: Counter[tuple[str, str]] = Counter()  # (device, op) -> calls

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if not _is_data_op(func, args, kwargs):
            inputs, outputs = _tensors((args, kwargs)), _tensors(out)
            if any(t.is_floating_point() or t.is_complex() for t in inputs + outputs):
                self.compute[_compute_device(inputs, outputs), str(func.overloadpacket)] += 1
        return out

    def off(self, accelerator: str) -> Counter[str]:
        """The compute ops that ran on a device other than ``accelerator``, with their call
        counts."""
        return Counter(
            {f"{op} on {dev}": n for (dev, op), n in self.compute.items() if dev != accelerator}
        )

    def on(self, accelerator: str) -> int:
        return sum(n for (dev, _), n in self.compute.items() if dev == accelerator)
