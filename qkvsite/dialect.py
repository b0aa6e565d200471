"""The page dialect, parsed in one place for the hooks, the notebook generator and the tests.

A page is Markdown plus four conventions:

- a Python fence holds only includes, ``--8<-- "snippets/<chapter>/<file>.py:<section>"``
  (pymdownx.snippets, with the settings of mkdocs.yml);
- ``<!--pytest-codeblocks:cont-->`` on the line before a fence: the block continues the Python
  block above it (same namespace);
- ``<!--pytest-codeblocks:expected-output-->`` before a fence: that fence is what the Python
  block above it prints. After its language the fence may say how it is compared
  (``OUTPUT_OPTIONS``): nothing, character for character; ``numbers``, each number to the
  precision it is written with; ``tolerance=0.05``, each number within 5 % of the one shown;
  ``measured="<where>"``, a time or a size measured on the machine named, compared by its form
  only (the text with every number taken out);
- ``![alt](figures/<name>.svg)`` followed by a ``/// caption`` block.

The markers are pytest-codeblocks' syntax; ``tests/tooling/test_dialect.py`` checks that this
parser reads every page as pytest-codeblocks does. A section may declare the oldest torch it
needs with a comment line ``# requires torch >= 2.5``: the runner skips the block on an older
torch and the page labels it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from pathlib import Path

from qkvsite import config
from qkvsite.upstream import require

MARKER = re.compile(r"^\s*<!--[-\s]*pytest-codeblocks:(?P<keyword>[\w-]+)[-\s]*-->\s*$")
OUTPUT_MARKERS = {"expected-output", "expected-output-ignore-whitespace"}
KNOWN_MARKERS = OUTPUT_MARKERS | {"cont"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})(?P<info>[^`]*)$")
INCLUDE = re.compile(r'^\s*--8<--\s+"(?P<path>[^":]+)(?::(?P<section>[\w-]+))?"\s*$')
REQUIRES = re.compile(r"^\s*# requires torch >= (?P<version>\d+\.\d+)\b", re.M)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)
TITLE = re.compile(r"^# (.+)$", re.M)
FIGURE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\(figures/(?P<name>[\w-]+)\.svg\)\s*$")
PYTHON = {"python", "py"}
# how an output fence is compared, after its language: ```text numbers, ```text tolerance=0.05,
# ```text measured="1 CPU thread, torch 2.13.0"
OUTPUT_OPTIONS = re.compile(
    r'^(?:(?P<numbers>numbers)|tolerance=(?P<tolerance>\d*\.?\d+)|measured="(?P<measured>[^"]*)")$'
)


class DialectError(ValueError):
    """A page breaks the dialect (a marker with no fence, an unknown marker, an unclosed fence)."""


@dataclass(frozen=True)
class Include:
    path: str  # relative to the repository root, e.g. "snippets/qkv/projections.py"
    section: str | None


@dataclass
class Fence:
    start: int  # 0-based index of the opening fence line
    end: int  # of the closing fence line
    indent: str
    ticks: str
    info: str  # what follows the backticks: 'python title="x"'
    body: str  # the lines between, the fence's indentation removed
    marker: str | None  # the pytest-codeblocks keyword on the line(s) just before it

    @property
    def syntax(self) -> str:
        words = self.info.replace("{", " ").replace(".", " ").split()
        return words[0] if words else ""

    @property
    def lineno(self) -> int:
        return self.start + 1

    @property
    def comparison(self) -> dict[str, str]:
        """How an output fence is compared: {} (exactly), {"numbers": ...}, {"tolerance": "0.05"}
        or {"measured": "<where>"} (``OUTPUT_OPTIONS``)."""
        option = self.info[len(self.syntax) :].strip()
        if not option:
            return {}
        match = OUTPUT_OPTIONS.match(option)
        if match is None or self.syntax != "text":
            raise DialectError(
                f"line {self.lineno}: an output fence is ```text, then nothing, numbers,"
                f' tolerance=<fraction> or measured="<where>"; not {self.info!r}'
            )
        return {name: value for name, value in match.groupdict().items() if value is not None}


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


@dataclass
class Block:
    """A Python block as a reader sees it: its code with the includes expanded."""

    page: Path
    fence: Fence
    code: str
    continues: bool
    output: Fence | None = None
    includes: list[Include] = field(default_factory=list)
    requires: str | None = None  # the oldest torch this block or a block it continues needs

    @property
    def lineno(self) -> int:
        return self.fence.lineno

    @property
    def expected_output(self) -> str | None:
        return self.output.body if self.output else None

    @property
    def where(self) -> str:
        try:
            page = self.page.relative_to(config.ROOT)
        except ValueError:
            page = self.page
        return f"{page}:{self.lineno}"


@dataclass(frozen=True)
class Figure:
    name: str
    alt: str
    caption: str
    lineno: int


def scan(text: str) -> list[Fence]:
    """Every fence of a page, with the marker written before it."""
    lines = text.split("\n")
    fences, marker, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if match := MARKER.match(line):
            keyword = match["keyword"]
            if keyword not in KNOWN_MARKERS:
                raise DialectError(f"line {i + 1}: unknown marker {keyword!r}")
            if marker:
                raise DialectError(f"line {i + 1}: two markers before one fence")
            marker, i = keyword, i + 1
            continue
        fence = FENCE.match(line)
        if not fence:
            if marker and line.strip():
                raise DialectError(
                    f"line {i + 1}: the {marker!r} marker is not followed by a fence"
                )
            i += 1
            continue
        indent, ticks = fence["indent"], fence["ticks"]
        end = i + 1
        while end < len(lines) and not lines[end].lstrip().startswith(ticks):
            end += 1
        if end == len(lines):
            raise DialectError(f"line {i + 1}: fence never closed")
        body = "".join(_dedent(line, indent) + "\n" for line in lines[i + 1 : end])
        fences.append(Fence(i, end, indent, ticks, fence["info"].strip(), body, marker))
        marker, i = None, end + 1
    if marker:
        raise DialectError(
            f"the {marker!r} marker at the end of the page is not followed by a fence"
        )
    return fences


def _dedent(line: str, indent: str) -> str:
    return line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t")


@cache
def _snippet_preprocessor(settings_key: tuple):
    import markdown

    settings = dict(settings_key)
    settings["base_path"] = list(settings["base_path"])
    md = markdown.Markdown(
        extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": settings}
    )
    require("snippet" in md.preprocessors, "pymdown-extensions", "a preprocessor named 'snippet'")
    return md.preprocessors["snippet"]


def expand(body: str, settings: dict | None = None) -> str:
    """A fence's body with its ``--8<--`` includes replaced by the snippet sections."""
    settings = settings or config.snippet_settings()
    key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in settings.items()))
    files = tuple(
        _text(settings.get("base_path", ["."]), include.path) for include in includes(body)
    )
    return _expanded(body, key, files)


def _text(bases: list[str], path: str) -> str | None:
    """The included file as pymdownx.snippets finds it: under the first base path that has it."""
    found = [Path(base) / path for base in bases if (Path(base) / path).is_file()]
    return found[0].read_text(encoding="utf-8") if found else None


# a pure function of the text it is given: the body and the files it includes
@lru_cache(maxsize=4096)
def _expanded(body: str, settings_key: tuple, files: tuple) -> str:
    lines = body.rstrip("\n").split("\n")
    return "\n".join(_snippet_preprocessor(settings_key).run(lines)) + "\n"


def includes(body: str) -> list[Include]:
    return [Include(m["path"], m["section"]) for m in map(INCLUDE.match, body.split("\n")) if m]


def requirement(code: str) -> str | None:
    """The newest ``# requires torch >= X.Y`` declared in a block's code."""
    versions = [m["version"] for m in REQUIRES.finditer(code)]
    return max(versions, key=version_tuple) if versions else None


def _newest(*versions: str | None) -> str | None:
    known = [v for v in versions if v]
    return max(known, key=version_tuple) if known else None


class Page:
    """One page of the site, parsed."""

    def __init__(self, path: Path, text: str | None = None, settings: dict | None = None):
        self.path = Path(path)
        self.text = self.path.read_text(encoding="utf-8") if text is None else text
        self.settings = settings

    @cached_property
    def fences(self) -> list[Fence]:
        return scan(self.text)

    @property
    def lang(self) -> str:
        return config.language_of(self.path)

    @cached_property
    def meta(self) -> dict:
        """The page's YAML front matter (MkDocs' page.meta): a chapter's `description`."""
        import yaml

        match = FRONT_MATTER.match(self.text)
        return (yaml.safe_load(match[1]) or {}) if match else {}

    @property
    def body(self) -> str:
        """The page without its front matter."""
        match = FRONT_MATTER.match(self.text)
        return self.text[match.end() :].lstrip("\n") if match else self.text

    @property
    def title(self) -> str:
        """The first heading: '2. Where Q, K and V come from'."""
        match = TITLE.search(self.text)
        return match[1].strip() if match else self.path.stem

    @cached_property
    def blocks(self) -> list[Block]:
        """The Python blocks in page order, each with its output and its effective torch
        requirement."""
        blocks: list[Block] = []
        for fence in self.fences:
            if fence.marker in OUTPUT_MARKERS:
                if not blocks or blocks[-1].output is not None:
                    raise DialectError(
                        f"{self.path}:{fence.lineno}: an output with no Python block above it"
                    )
                _ = fence.comparison  # an unknown option fails here
                blocks[-1].output = fence
            elif fence.syntax in PYTHON:
                continues = fence.marker == "cont"
                if continues and not blocks:
                    raise DialectError(
                        f"{self.path}:{fence.lineno}: the first Python block cannot continue "
                        "another"
                    )
                code = expand(fence.body, self.settings)
                inherited = blocks[-1].requires if continues else None
                blocks.append(
                    Block(
                        self.path,
                        fence,
                        code,
                        continues,
                        includes=includes(fence.body),
                        requires=_newest(inherited, requirement(code)),
                    )
                )
            elif fence.marker == "cont":
                raise DialectError(
                    f"{self.path}:{fence.lineno}: 'cont' before a {fence.syntax or 'plain'} fence"
                )
        return blocks

    def chain(self, index: int) -> list[Block]:
        """The blocks that must run before blocks[index], oldest first."""
        start = index
        while self.blocks[start].continues:
            start -= 1
        return self.blocks[start:index]

    @cached_property
    def figures(self) -> list[Figure]:
        lines, out = self.text.split("\n"), []
        for i, line in enumerate(lines):
            if match := FIGURE.match(line):
                caption = ""
                if i + 1 < len(lines) and lines[i + 1].strip() == "/// caption":
                    end = next(
                        (j for j in range(i + 2, len(lines)) if lines[j].strip() == "///"),
                        len(lines),
                    )
                    caption = " ".join(" ".join(lines[i + 2 : end]).split())
                out.append(Figure(match["name"], match["alt"], caption, i + 1))
        return out

    @property
    def includes(self) -> list[Include]:
        return [inc for block in self.blocks for inc in block.includes]

    @property
    def markers(self) -> list[str]:
        return [fence.marker for fence in self.fences if fence.marker]
