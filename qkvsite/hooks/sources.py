"""Every code block labelled with where it comes from, linked to that source in the repository.

A Python block gets the snippet file it includes as its title, plus "continues the block above"
for a ``cont`` block and "requires torch >= X.Y" where its code (or a block it continues)
declares it; an output block is titled "Output", and a measured one says where it was measured
and that the reader's numbers will differ. Authors write only the markers and declarations;
the labels follow from them (``qkvsite.dialect``), so the page and the tests cannot disagree.
Each file name in a title links to the snippet's lines in the repository, and a Markdown link
``[text](repo:path)`` links to a file of the repository (``README.md``). A build without
``REPO_URL`` (a local one) links the GitHub repository its clone came from; with neither, nothing
links to a repository (the titles and ``repo:`` links stay text) rather than to a placeholder.
"""

import html
import os
import re
import subprocess

from qkvsite import config as site
from qkvsite.dialect import Block, Page

LABELS = {
    "zh": {
        "cont": "接上一段运行",
        "output": "输出",
        "measured": "输出（实测于 {}，你那里的数字会不同）",
        "requires": "需要 torch ≥ {}",
    },
    "en": {
        "cont": "continues the block above: run that one first",
        "output": "Output",
        "measured": "Output measured on {}: your numbers will differ",
        "requires": "requires torch ≥ {}",
    },
}


def output_title(fence, lang: str) -> str:
    where = fence.comparison.get("measured")
    return LABELS[lang]["output"] if where is None else LABELS[lang]["measured"].format(where)


def block_title(block: Block, lang: str) -> str:
    labels = LABELS[lang]
    parts = [block.includes[0].path]
    if block.continues:
        parts.append(labels["cont"])
    if block.requires:
        parts.append(labels["requires"].format(block.requires))
    return " · ".join(parts)


def add_titles(page: Page) -> str:
    """The page's Markdown with a title on every Python block and output block.

    The fence's attributes also say what the page's script needs: a block that continues the one
    above carries ``.qkv-cont`` (its copy button copies the whole chain,
    docs/javascripts/site.js), an output block ``.qkv-output`` (no copy button: it is not code).
    """
    lines = page.text.split("\n")
    fences = []
    for block in page.blocks:
        if block.includes:
            fences.append(
                (block.fence, block_title(block, page.lang), ".qkv-cont" if block.continues else "")
            )
        if block.output:
            fences.append((block.output, output_title(block.output, page.lang), ".qkv-output"))
    for fence, title, classes in fences:
        if fence.info != fence.syntax and not (classes == ".qkv-output" and fence.comparison):
            raise ValueError(
                f"{page.path}:{fence.lineno}: a fence names only its language; titles are generated"
            )
        title = html.escape(title, quote=True)
        attributes = " ".join(filter(None, [f".{fence.syntax}", classes, f'title="{title}"']))
        lines[fence.start] = f"{fence.indent}{fence.ticks}{{ {attributes} }}"
    return "\n".join(lines)


def section_lines(path: str, section: str | None) -> tuple[int, int] | None:
    """First and last line of a snippet section in its file (1-based), or None for a whole file."""
    if section is None:
        return None
    lines = (site.ROOT / path).read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if f"[start:{section}]" in line)
    end = next(i for i, line in enumerate(lines) if f"[end:{section}]" in line)
    return start + 2, end


def source_url(config, block: Block) -> str:
    """The block's first snippet section in the repository, e.g.
    .../blob/main/snippets/x.py#L4-L20."""
    include = block.includes[0]
    url = repo_url(config, include.path)
    lines = section_lines(include.path, include.section)
    return f"{url}#L{lines[0]}-L{lines[1]}" if lines else url


REPO_LINK = re.compile(r"\]\(repo:([^)\s]+)\)")


def repo_url(config, path: str) -> str:
    """A file of the repository on its host, at the branch of edit_uri."""
    blob = config.edit_uri.replace("edit/", "blob/", 1).removesuffix("docs/")
    return f"{config.repo_url.rstrip('/')}/{blob}{path}"


def title_blocks(markdown: str, page, config) -> str:
    """Every code block titled with its source (``add_titles``); ``repo:`` links to the
    repository."""
    if config.repo_url:
        markdown = REPO_LINK.sub(lambda m: f"]({repo_url(config, m[1])})", markdown)
    else:  # no repository to link: the link's text alone
        markdown = re.sub(r"\[([^\]]+)\]\(repo:[^)\s]+\)", r"\1", markdown)
    parsed = Page(page.file.abs_src_path, text=markdown)
    page.meta["qkv_sources"] = [
        (block.includes[0].path, source_url(config, block) if config.repo_url else None)
        for block in parsed.blocks
        if block.includes
    ]
    return add_titles(parsed)


TITLE = re.compile(r'<span class="filename">(snippets/[^<\s]+\.py)')


def link_titles(html_text: str, page) -> str:
    """Link the file name in each block title, in page order."""
    sources = iter(page.meta.get("qkv_sources", []))

    def link(match):
        path, url = next(sources)
        assert path == match[1], (path, match[1])
        if url is None:
            return match[0]
        return f'<span class="filename"><a href="{html.escape(url)}">{match[1]}</a>'

    return TITLE.sub(link, html_text)


GITHUB_REMOTE = re.compile(
    r"(?:https://|ssh://git@|git@)github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?"
)


def repo_from_git_remote(config) -> None:
    """Without ``REPO_URL``, the repository links lead to this clone's origin on GitHub; a clone of
    somewhere else has none."""
    if os.environ.get("REPO_URL"):
        return
    try:
        command = ["git", "remote", "get-url", "origin"]
        remote = subprocess.run(
            command, cwd=site.ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return
    if match := GITHUB_REMOTE.fullmatch(remote):
        config.repo_url = f"https://github.com/{match[1]}/{match[2]}"


def no_repository_no_edit_links(config) -> None:
    """Without a repository there is nothing to edit a page in: no edit links (MkDocs would make
    'edit/main/docs/<page>' links, relative to nothing)."""
    if not config.repo_url:
        config.edit_uri = None
