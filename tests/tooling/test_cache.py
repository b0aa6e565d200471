"""The build's one cache rule (qkvsite.cache): entries found by a key of what they are made from, checked on every
read, written whole even by two processes at once, evicted when no build used them."""

import subprocess
import sys

import pytest

from qkvsite.cache import Cache, TemplateCache, key, write_atomically

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


@pytest.fixture
def entries(tmp_path):
    cache = Cache("test", ".txt")
    cache.directory = tmp_path
    return cache


DAMAGES = {
    "truncated": lambda raw: raw[: len(raw) - 3],
    "edited": lambda raw: raw.replace(b"drawing", b"Drawing"),
    "no checksum": lambda raw: raw.split(b"\n", 1)[1],
    "empty": lambda raw: b"",
}


def test_an_entry_is_read_back_as_written(entries):
    entries.put("k", "a drawing")
    assert entries.get("k") == b"a drawing"


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_a_damaged_entry_reads_as_absent_is_deleted_and_made_again(entries, damage):
    entries.put("k", "a drawing")
    path = entries.path("k")
    path.write_bytes(damage(path.read_bytes()))
    assert entries.get("k") is None and not path.exists()
    assert entries.get_or_make("k", lambda: "a drawing again") == b"a drawing again"
    assert entries.get("k") == b"a drawing again"


def test_the_key_follows_every_declared_input(tmp_path):
    source = tmp_path / "source.py"
    source.write_text("x = 1")
    base = key("figure", source, ["torch==2.13.0"])
    assert key("figure", source, ["torch==2.13.0"]) == base
    assert key("figure", source, ["torch==2.14.0"]) != base
    assert key("other", source, ["torch==2.13.0"]) != base
    source.write_text("x = 2")
    assert key("figure", source, ["torch==2.13.0"]) != base
    source.unlink()
    assert key("figure", source, ["torch==2.13.0"]) != base


def test_entries_no_build_used_are_evicted_but_not_those_written_since_it_started(entries):
    import os
    import time

    for name in ("old", "kept", "another-builds"):
        entries.put(name, name)
    writing = entries.directory / "being-written.txt.123.456.tmp"  # another process, writing an entry
    writing.write_bytes(b"half")
    earlier = time.time() - 60
    for path in entries.directory.iterdir():
        os.utime(path, (earlier, earlier))
    entries.used, entries.since = set(), time.time()  # a new build
    assert entries.get("kept") == b"kept"
    entries.put("another-builds", "written again by a build beside this one")
    assert [path.name for path in entries.evict()] == ["old.txt"]
    assert sorted(path.name for path in entries.directory.iterdir()) == sorted(
        ["kept.txt", "another-builds.txt", writing.name]
    )


def test_what_an_older_layout_of_the_build_left_in_the_cache_is_deleted(tmp_path, monkeypatch):
    from qkvsite import cache

    monkeypatch.setattr(cache, "CACHE", tmp_path)
    for name in ("figures", "verification", "search"):
        (tmp_path / name).mkdir()
    (tmp_path / "highlight.json").write_text("{}")
    Cache("figures")
    assert sorted(path.name for path in cache.evict_unknown()) == ["highlight.json", "search"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["figures", "verification"]


def test_a_truncated_compiled_template_is_compiled_again_not_a_bare_unpickling_error(tmp_path):
    from jinja2 import DictLoader, Environment

    templates = Cache("jinja")
    templates.directory = tmp_path
    make = lambda: Environment(loader=DictLoader({"t": "{{ x }}!"}), bytecode_cache=TemplateCache(templates))  # noqa: E731
    assert make().get_template("t").render(x=1) == "1!"
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(entry.read_bytes()[:40])
    assert make().get_template("t").render(x=2) == "2!"  # compiled again
    assert make().get_template("t").render(x=3) == "3!"
