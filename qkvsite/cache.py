"""The build's one cache rule: ``.cache/<name>/<key>``, each entry checked on every read.

- The key is a hash of everything the entry is declared to be made from (``key``): files by their
  content, package versions, settings, text. Nothing else decides whether an entry is reused.
- An entry holds a checksum of its bytes, verified when it is read: a missing, truncated, edited or
  unreadable entry reads as absent, is deleted and made again. It is never published.
- An entry is written whole (a temporary file, then a rename): a build stopped halfway, or two
  processes writing the same entry at once, leave a complete entry or none.
- ``evict`` removes the entries a build did not use (older versions of edited pages, figures, code),
  but none written since the build started (another build's, running beside it) and no file being
  written.
- Eviction never touches what the build did not write. The cache root carries a marker file
  (``.qkv-cache``) that the build writes when it creates the root (and in the project's own
  ``.cache``); a root without it, such as a shared directory named by ``QKV_CACHE_DIR``, is never
  evicted from. In a marked root only files named as the build names its entries (``<key><suffix>``)
  are deleted, and only directories that carry the marker themselves.

A directory that another package writes (mkdocs-jupyter's rendered pages) follows the same rule
through a manifest of its files' checksums: ``check_directory`` deletes every file the manifest does
not vouch for before the package reads it, and ``vouch_for_directory`` writes the manifest after the
build.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWN = ROOT / ".cache"  # the project's own cache directory (ignored by git)
CACHE = Path(os.environ.get("QKV_CACHE_DIR") or OWN)  # another directory: a build of its own
MARKER = ".qkv-cache"  # in a directory the build made: only there does it delete anything
ENTRY = re.compile(r"[0-9a-f]{32}")  # an entry's name is its key (``key``), then its cache's suffix


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key(*inputs) -> str:
    """A hash of the inputs: a Path by its name and content (or its absence), text and bytes as they
    are, any other value as JSON."""
    digest = hashlib.sha256()
    for item in inputs:
        if isinstance(item, Path):
            try:
                data = item.read_bytes()
            except FileNotFoundError:
                data = b"(missing)"
            name = str(item.relative_to(ROOT)) if item.is_relative_to(ROOT) else str(item)
            part = b"file " + name.encode() + b"\0" + data
        elif isinstance(item, bytes):
            part = item
        elif isinstance(item, str):
            part = item.encode()
        else:
            part = json.dumps(item, sort_keys=True, ensure_ascii=False, default=str).encode()
        digest.update(_digest(part).encode())
    return digest.hexdigest()[:32]


def versions(*packages: str) -> list[str]:
    """``name==version`` of each installed package, read from its metadata (nothing is imported)."""
    return [f"{package}=={_version(package)}" for package in packages]


@functools.cache
def _version(package: str) -> str:
    # read once per process (a few ms each): packages are not upgraded under a build
    return version(package)


def write_atomically(path: Path, data: bytes | str) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file of this process and
    thread."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    temporary.replace(path)


def make_directory(directory: Path) -> Path:
    """Create ``directory`` (and the cache root); mark each one the build creates, and the project's
    own ``.cache`` and the directories in it (an older build made them before markers), as the
    build's. Any other directory that was there before, unmarked, stays unmarked: nothing in it is
    ever deleted."""
    for each in dict.fromkeys([CACHE, directory]):
        created = not each.is_dir()
        each.mkdir(parents=True, exist_ok=True)
        if (created or OWN in (each, each.parent)) and not (each / MARKER).exists():
            write_atomically(
                each / MARKER,
                "Made by the qkv site build (qkvsite/cache.py): it evicts its own entries here.\n",
            )
    return directory


def marked(directory: Path) -> bool:
    """Whether the build made ``directory``: only then may it delete what is in it."""
    return (directory / MARKER).is_file()


KNOWN = {
    "mkdocs-jupyter",
    "verification",
}  # every directory of .cache/ a build or the tests write (and each Cache's)
HEADER = b"qkv-cache sha256 "  # an entry: this, the checksum of the data, a newline, the data


class Cache:
    """The entries of one kind (``.cache/<name>/``)."""

    def __init__(self, name: str, suffix: str = ""):
        self.directory = CACHE / name
        self.suffix = suffix
        self.used: set[str] = set()
        # when the build that uses these entries started: the last eviction
        self.since = time.time()
        KNOWN.add(name)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{self.suffix}"

    def get(self, key: str) -> bytes | None:
        """The entry's data, or None: absent, or not what was written (it is deleted)."""
        self.used.add(key)
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        head, newline, data = raw.partition(b"\n")
        if newline and head == HEADER + _digest(data).encode():
            return data
        path.unlink(missing_ok=True)
        return None

    def put(self, key: str, data: bytes | str) -> bytes:
        data = data.encode("utf-8") if isinstance(data, str) else data
        self.used.add(key)
        make_directory(self.directory)
        write_atomically(self.path(key), HEADER + _digest(data).encode() + b"\n" + data)
        return data

    def get_or_make(self, key: str, make: Callable[[], bytes | str]) -> bytes:
        data = self.get(key)
        return self.put(key, make()) if data is None else data

    def keep(self, key: str) -> None:
        """The entry is this build's, though not read: ``evict`` keeps it."""
        self.used.add(key)

    def has(self, key: str) -> bool:
        return self.get(key) is not None

    def evict(self, keep: Iterable[str] | None = None) -> list[Path]:
        """Delete every entry but those of ``keep`` (by default, those this process used since the
        last eviction) and those written since then; return what was deleted. Only in a directory
        inside a marked root, and only files named as entries are (not a *.tmp file another process
        is writing, not another program's)."""
        wanted = {self.path(each).name for each in set(self.used if keep is None else keep)}
        stale = []
        if not marked(self.directory.parent):
            self.used, self.since = set(), time.time()
            return stale
        for path in self.directory.glob(f"*{self.suffix}"):
            if not ENTRY.fullmatch(path.name.removesuffix(self.suffix)):
                continue
            try:
                if path.name not in wanted and path.stat().st_mtime < self.since:
                    path.unlink()
                    stale.append(path)
            except FileNotFoundError:
                pass  # evicted by another build meanwhile
        self.used, self.since = set(), time.time()
        return stale


def evict_unknown() -> list[Path]:
    """Delete the directories of the cache root that no cache of this build knows but the build made
    (what an older layout of the build left): each must carry the marker, in a marked root. Nothing
    else is touched."""
    if not marked(CACHE):
        return []
    stale = [p for p in CACHE.glob("*") if p.name not in KNOWN and p.is_dir() and marked(p)]
    for path in stale:
        shutil.rmtree(path)
    return stale


def manifest(directory: Path) -> Path:
    """Where the checksums of a directory's files are kept: beside it (the package that writes the
    directory may delete what it does not know in it)."""
    return directory.with_name(f"{directory.name}.manifest.json")


def check_directory(directory: Path, made_by: str) -> list[Path]:
    """Delete every file of ``directory`` that its manifest does not vouch for (all of them if the
    manifest is missing, broken, or was written for another ``made_by``); return what was deleted.
    """
    try:
        vouched = json.loads(manifest(directory).read_text(encoding="utf-8"))
        files = vouched["files"] if vouched["made_by"] == made_by else {}
    except (OSError, ValueError, KeyError, TypeError):
        files = {}
    files = files if isinstance(files, dict) else {}
    stale = [
        p
        for p in sorted(directory.glob("*"))
        if p.is_file() and files.get(p.name) != _digest(p.read_bytes())
    ]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def vouch_for_directory(directory: Path, made_by: str) -> None:
    """Write the manifest of ``directory``: each file's checksum, and what made them."""
    if directory.is_dir():
        files = {
            p.name: _digest(p.read_bytes()) for p in sorted(directory.glob("*")) if p.is_file()
        }
        write_atomically(
            manifest(directory), json.dumps({"made_by": made_by, "files": files}, indent=1)
        )
