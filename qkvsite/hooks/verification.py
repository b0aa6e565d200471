"""The Verification page and the footer's claim, both generated from the committed records.

``verification/records/*.json`` are written by test runs (``qkvsite.records``). The footer says
which devices and torch versions ran every page block as the pages are now (``records.proves``),
and "GPU: not yet run" until a CUDA record does; the Verification page lists the records
themselves in place of the line ``<!-- verification-records -->``, each marked with whether it
ran these pages.
"""

from qkvsite import config as site
from qkvsite import records
from qkvsite.config import words
from qkvsite.hooks import building

PLACEHOLDER = "<!-- verification-records -->"

# each text in the two languages, (Chinese, English), or one string for both
TEXT = {
    "device": {"cpu": "CPU", "cuda": ("GPU（CUDA）", "GPU (CUDA)")},
    "all": (
        "{device} 上每段代码都已运行并核对输出：torch {versions}",
        "Every code block has run on {device} with its output checked: torch {versions}",
    ),
    "all_but_newer": (
        "torch {versions} 上也是，标明需要更新 torch 的代码块除外",
        "on torch {versions} too, except the blocks labelled with a newer torch",
    ),
    "none": ("{device}：尚未运行", "{device}: not yet run"),
    "none_current": (
        "{device}：尚未在当前版本的代码上运行",
        "{device}: not yet run on the current version of the code",
    ),
    "and": ("、", ", "),
    "aside": ("（{}）", " ({})"),
    "separator": ("；", "; "),
    "end": ("。", "."),
    "more": ("验证记录", "Verification records"),
    "header": (
        "| 日期 | 设备 | torch | Python | 代码块 | 当前代码 | 提交 | 运行于 |",
        "| Date | Device | torch | Python | Blocks | Current code | Commit | Run on |",
    ),
    "current": {True: ("是", "yes"), False: ("否（较早的版本）", "no (an earlier version)")},
    "blocks": ("{passed} 通过", "{passed} passed"),
    "failed": ("，{failed} 失败", ", {failed} failed"),
    "skipped": ("，{skipped} 跳过（需要更新的 torch）", ", {skipped} skipped (need a newer torch)"),
    "runner": {
        "local": ("开发者机器", "a developer's machine"),
        "ci": ("CI（.ci/run）", "CI (.ci/run)"),
        "github-actions": "GitHub Actions",
    },
    "threads": ("{n} 线程", "{n} threads"),
    "thread": ("{n} 线程", "{n} thread"),
    "no_records": ("还没有提交任何验证记录。", "No verification record has been committed yet."),
}


def claim(lang: str, recs: list[dict], current: dict) -> dict:
    """The footer: what the records prove about the current pages, per device."""
    text, parts = words(TEXT, lang), []
    for device, proven in records.summary(recs, current).items():
        name = text["device"][device]
        if not proven["all"] and not proven["all_but_newer"]:
            ran = any(r["device"] == device and records.passed(r) for r in recs)
            parts.append(text["none_current" if ran else "none"].format(device=name))
            continue
        part = (
            text["all"].format(device=name, versions=text["and"].join(proven["all"]))
            if proven["all"]
            else ""
        )
        if proven["all_but_newer"]:
            rest = text["all_but_newer"].format(versions=text["and"].join(proven["all_but_newer"]))
            part = part + text["aside"].format(rest) if part else rest
        parts.append(part)
    return {
        "text": text["separator"].join(parts) + text["end"],
        "more": text["more"],
        "link": site.page_url("verification", lang),
    }


def device(rec: dict, lang: str) -> str:
    if rec["device"] == "cuda":
        return f"{rec['cuda']['device']} (CUDA {rec['cuda']['version']})"
    threads = words(TEXT, lang)["thread" if rec["threads"] == 1 else "threads"].format(
        n=rec["threads"]
    )
    return f"{rec['cpu']} ({rec['cpu_capability']}, {threads})"


def blocks(rec: dict, lang: str) -> str:
    text, counts = words(TEXT, lang), rec["page_blocks"]
    out = text["blocks"].format(**counts)
    if counts["failed"]:
        out += text["failed"].format(**counts)
    if counts["skipped"]:
        out += text["skipped"].format(**counts)
    return out


def table(lang: str, recs: list[dict], current: dict, repo_url: str) -> str:
    text = words(TEXT, lang)
    if not recs:
        return text["no_records"]
    rows = [text["header"], "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for rec in recs:
        commit = rec.get("commit") or ""
        link = f"`{commit[:7]}`" if commit else "—"
        if commit and repo_url:
            link = f"[{link}]({repo_url.rstrip('/')}/commit/{commit})"
        if commit and not rec.get("clean", True):
            link += " +"
        torch_version = rec["torch"].split("+")[0]
        rows.append(
            f"| {rec['date'][:10]} | {device(rec, lang)} | {torch_version} | {rec['python']} | "
            f"{blocks(rec, lang)} | {text['current'][records.proves(rec, current)]} | {link} "
            f"| {text['runner'].get(rec['runner'], rec['runner'])} |"
        )
    return "\n".join(rows)


def set_claim(config, pages: dict) -> None:
    """The footer's claim about ``pages`` (``records.fingerprint``), in the pass's language
    (``overrides/partials/copyright.html``)."""
    config.extra["qkv_verified"] = claim(building(config), records.load_all(), pages)


def add_records(markdown: str, page, config, pages: dict) -> str:
    """The Verification page's table of records, each marked with whether it ran ``pages``, in place
    of its placeholder line."""
    if site.page_name(page.file.src_uri) != "verification":
        return markdown
    if PLACEHOLDER not in markdown:
        raise ValueError(f"{page.file.src_uri} lacks the line {PLACEHOLDER} where the records go")
    return markdown.replace(
        PLACEHOLDER, table(building(config), records.load_all(), pages, config.repo_url)
    )
