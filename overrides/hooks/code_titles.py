"""MkDocs hook: label every code block with where it comes from.

A Python block included from ``snippets/`` gets its file name as title, and a
block marked ``<!--pytest-codeblocks:cont-->`` also says that it continues the
block above. The block after ``<!--pytest-codeblocks:expected-output-->`` is
labelled as output. Authors write only the markers; the labels follow from
them, so the page and the tests cannot disagree about which block continues
which.
"""

import re

LABELS = {
    "zh": {"cont": "接上一段代码，需先运行上一段", "output": "输出"},
    "en": {"cont": "continues the block above: run that one first", "output": "Output"},
}

MARKER = re.compile(r"^\s*<!--\s*pytest-codeblocks:(cont|expected-output)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,})(?P<info>[^`]*)$")
INCLUDE = re.compile(r"""--8<--\s+["']?(?P<path>[^"':]+)""")


def page_language(src_uri: str) -> str:
    match = re.search(r"\.(\w\w)\.md$", src_uri)
    return match.group(1) if match else "zh"


def add_titles(markdown: str, lang: str) -> str:
    labels = LABELS[lang]
    lines = markdown.split("\n")
    pending = None
    i = 0
    while i < len(lines):
        marker = MARKER.match(lines[i])
        if marker:
            pending = marker.group(1)
            i += 1
            continue
        fence = FENCE.match(lines[i])
        if not fence:
            if lines[i].strip():
                pending = None
            i += 1
            continue
        # find the closing fence and the first include inside
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence.group("ticks")):
            end += 1
        info = fence.group("info").strip()
        if info and "title=" not in info:
            include = next(filter(None, map(INCLUDE.search, lines[i + 1 : end])), None)
            title = None
            if pending == "expected-output":
                title = labels["output"]
            elif include:
                title = include.group("path")
                if pending == "cont":
                    title += " · " + labels["cont"]
            if title:
                lines[i] = f'{fence.group("indent")}{fence.group("ticks")}{info} title="{title}"'
        pending = None
        i = end + 1
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, files):
    return add_titles(markdown, page_language(page.file.src_uri))
