"""Build caches (.cache/) are written whole, even by two processes at once (qkvsite.cache)."""

import subprocess
import sys

from qkvsite.cache import write_atomically

WRITER = """
import sys
from pathlib import Path
from qkvsite.cache import write_atomically
for _ in range(200):
    write_atomically(Path(sys.argv[1]), sys.argv[2] * 100_000)
"""


def test_an_entry_two_processes_write_at_once_is_always_one_of_them_whole(tmp_path):
    entry = tmp_path / "figures" / "entry.svg"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(entry), mark]) for mark in "ab"]
    seen = set()
    while any(writer.poll() is None for writer in writers):
        if entry.exists():
            seen.add(entry.read_text())
    assert [writer.wait() for writer in writers] == [0, 0]
    assert seen <= {"a" * 100_000, "b" * 100_000}
    assert list(entry.parent.iterdir()) == [entry]  # no temporary file left behind


def test_text_is_written_as_utf8(tmp_path):
    write_atomically(tmp_path / "entry.json", '{"词": "token"}')
    assert (tmp_path / "entry.json").read_bytes() == '{"词": "token"}'.encode()
