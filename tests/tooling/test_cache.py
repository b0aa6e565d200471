"""The build's one cache rule (qkvsite.cache): entries found by a key of what they are made from,
checked on every read, written whole even by two processes at once, evicted when no build used
them.
"""

import os
import subprocess
import sys

import pytest

from qkvsite.cache import Cache, key, write_atomically

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
def entries(tmp_path, monkeypatch):
    from qkvsite import cache as cache_module

    # a root the build creates: marked
    monkeypatch.setattr(cache_module, "CACHE", tmp_path / "cache")
    cache = Cache("test", ".txt")
    cache.directory = tmp_path / "cache" / "test"
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
        entries.put(key(name), name)
    # another process, writing an entry
    writing = entries.directory / f"{key('being written')}.txt.123.456.tmp"
    writing.write_bytes(b"half")
    earlier = time.time() - 60
    for path in entries.directory.iterdir():
        os.utime(path, (earlier, earlier))
    entries.used, entries.since = set(), time.time()  # a new build
    assert entries.get(key("kept")) == b"kept"
    entries.put(key("another-builds"), "written again by a build beside this one")
    assert [path.name for path in entries.evict()] == [entries.path(key("old")).name]
    assert sorted(path.name for path in entries.directory.iterdir()) == sorted(
        [
            ".qkv-cache",
            entries.path(key("kept")).name,
            entries.path(key("another-builds")).name,
            writing.name,
        ]
    )


def test_what_an_older_layout_of_the_build_left_in_the_cache_is_deleted(tmp_path, monkeypatch):
    from qkvsite import cache

    monkeypatch.setattr(cache, "CACHE", tmp_path / "cache")
    for name in ("figures", "verification", "search"):
        cache.make_directory(tmp_path / "cache" / name)  # made by the build: marked
    Cache("figures")
    assert sorted(path.name for path in cache.evict_unknown()) == ["search"]
    assert sorted(path.name for path in (tmp_path / "cache").iterdir()) == [
        ".qkv-cache",
        "figures",
        "verification",
    ]


FOREIGN = {
    "pip/http/entry": "a wheel",
    "huggingface/hub/model": "weights",
    "notes.txt": "mine",
    "figures/mine.svg": "<svg/>",
}


def shared_directory(root):
    """A user's cache directory (~/.cache) with other programs' files, one of them where the build
    keeps figures."""
    for name, text in FOREIGN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_cache_root_the_build_did_not_make_keeps_every_file_of_other_programs(
    tmp_path, monkeypatch
):
    from qkvsite import cache

    root = shared_directory(tmp_path / "shared")
    monkeypatch.setattr(cache, "CACHE", root)
    figures = Cache("figures", ".svg")
    figures.put(key("a figure"), "<svg/>")
    figures.used = set()  # a later build that used nothing: every entry is stale
    figures.since = float("inf")
    assert figures.evict() == [] and cache.evict_unknown() == []
    assert not (root / ".qkv-cache").exists()
    assert all((root / name).read_text() == text for name, text in FOREIGN.items())


def test_in_a_marked_root_eviction_deletes_only_what_the_build_named_and_made(
    tmp_path, monkeypatch
):
    from qkvsite import cache

    root = tmp_path / "cache"
    monkeypatch.setattr(cache, "CACHE", root)
    figures = Cache("figures", ".svg")
    figures.put(key("a figure"), "<svg/>")  # the build creates the root: it is marked
    shared_directory(root)
    figures.used, figures.since = set(), float("inf")
    assert [path.name for path in figures.evict()] == [f"{key('a figure')}.svg"]
    assert cache.evict_unknown() == []  # pip/ and huggingface/ carry no marker
    assert all((root / name).read_text() == text for name, text in FOREIGN.items())


def test_a_build_pointed_at_a_shared_cache_directory_keeps_other_programs_files(tmp_path):
    """The whole end of a build (qkvsite.hooks.notebooks.finish: every cache's eviction, the
    renderings' directories, what an older layout left), in a process of its own with
    QKV_CACHE_DIR set to a user's cache directory."""
    root = shared_directory(tmp_path / "shared")
    finish = (
        "from types import SimpleNamespace\nfrom qkvsite.hooks import notebooks\nfrom "
        "qkvsite.cache import Cache, key\nCache('figures', '.svg').put(key('x'), "
        "'<svg/>')\nnotebooks.finish(SimpleNamespace())\n"
    )
    env = {**os.environ, "QKV_CACHE_DIR": str(root)}
    subprocess.run([sys.executable, "-c", finish], env=env, check=True, timeout=120)
    assert all((root / name).read_text() == text for name, text in FOREIGN.items())


def test_a_figure_is_made_from_its_chapter_module_and_example_not_the_records_or_other_chapters():
    from qkvsite import figure_cache

    root = figure_cache.ROOT
    for name, (example, module, _) in figure_cache.declared().items():
        made_from = {
            path.relative_to(root).as_posix() for path in figure_cache.sources(example, module)
        }
        assert "qkvsite/records.py" not in made_from, name
        others = {p.relative_to(root).as_posix() for p in figure_cache.MODULES.glob("*.py")} - {
            module.relative_to(root).as_posix()
        }
        assert not made_from & others, name
        assert {"qkvsite/figures.py", "qkvsite/fonts.py", "qkvsite/machine.py"} <= made_from


def test_editing_the_records_or_the_drawing_library_redraws_no_card(monkeypatch):
    """A card's key names the card module, the fonts and matplotlib: not the figures' library."""
    from qkvsite import cache, cards

    read = []
    monkeypatch.setattr(cache, "key", lambda *inputs: read.extend(inputs) or "k")
    monkeypatch.setattr(cards, "key", cache.key)
    cards.card_key("title", "site", "en")
    files = {item.name for item in read if hasattr(item, "name")}
    assert files == {"cards.py", "fonts.py"}


def test_in_the_projects_own_cache_a_directory_an_older_build_made_is_the_builds(
    tmp_path, monkeypatch
):
    from qkvsite import cache

    own = tmp_path / ".cache"
    (own / "mkdocs-jupyter").mkdir(parents=True)  # made before the build wrote markers
    monkeypatch.setattr(cache, "OWN", own)
    monkeypatch.setattr(cache, "CACHE", own)
    cache.make_directory(own / "mkdocs-jupyter")
    assert cache.marked(own) and cache.marked(own / "mkdocs-jupyter")
