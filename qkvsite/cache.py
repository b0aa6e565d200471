"""Writing build caches (``.cache/``): an entry is replaced whole, never seen half written.

A build stopped halfway leaves no truncated entry behind, and two processes that write the same entry at once
(a test beside the build it runs alongside) each replace it with a complete file of their own.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def write_atomically(path: Path, data: bytes | str) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file of this process and thread."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    temporary.replace(path)
