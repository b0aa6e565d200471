"""A new chapter in one command, in the skeleton the tests demand:

    .venv/bin/python -m qkvsite.new_chapter <slug> "<English title>" "<中文标题>"

It writes both pages (``docs/<slug>.zh.md``, ``docs/<slug>.en.md``: front matter, ``# N.
Title``, the question, the abstract, a first section with a code block and its real output, the
summary, three exercises with folded answers, one of them in code, the references), the snippet
package (``snippets/<module>/``: an example and the exercises), the chapter's unit tests
(``tests/examples/test_<module>.py``) and its line in mkdocs.yml's chapter list (the chapter goes
last). Every place that says what the chapter is about is marked ``TODO``: the pages pass the
skeleton, parity and page-block tests as written, and the author's text replaces each ``TODO``
(CONTRIBUTING, "Add a chapter", lists every rule a test enforces).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import runpy
from pathlib import Path

from qkvsite import config

SLUG = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")

EXAMPLE = '''"""{title}: TODO what this example shows."""

# --8<-- [start:weights]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
scores = torch.tensor([2.0, 1.0, 0.1]).to(device)
weights = torch.softmax(scores, dim=-1)  # TODO the chapter's own first step
print([round(w, 3) for w in weights.cpu().tolist()])
# --8<-- [end:weights]
'''

EXERCISES = '''"""{title}: the exercises' coded answers."""

# --8<-- [start:answer]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
row = torch.tensor([3.0, 3.0, 3.0]).to(device)
print(torch.softmax(row, dim=-1).cpu())  # equal scores: equal weights
# --8<-- [end:answer]
'''

TEST = '''"""Chapter {number} (docs/{slug}.{{zh,en}}.md): snippets/{module}/*, checked against
PyTorch."""

import torch

from tests.conftest import run_snippet


def test_the_example_weights_are_pytorchs_softmax_and_sum_to_1():
    ns = run_snippet("{module}/example.py")
    expected = torch.nn.functional.softmax(ns["scores"], dim=-1)
    torch.testing.assert_close(ns["weights"], expected)
    torch.testing.assert_close(ns["weights"].sum(), torch.tensor(1.0, device=ns["device"]))
'''

PAGE = {
    "en": """---
description: 'TODO one line: what this chapter computes.'
---

# {number}. {title}

**The question:** TODO the question this chapter answers?

TODO the idea in plain words, then one running example traced by hand.

!!! abstract "After this chapter you can"

    - TODO what the reader can do after this chapter.

## {number}.1 TODO the first step

TODO what the block below shows.

```python
--8<-- "snippets/{module}/example.py:weights"
```

<!--pytest-codeblocks:expected-output-->
```text
{output}```

## Summary

TODO the chapter in a few sentences.

## Exercises

**1. (Recall)** TODO

??? success "Answer"

    TODO

**2. (Reasoning)** TODO

??? success "Answer"

    TODO

**3. (Coding)** TODO (here: what softmax gives a row of equal scores).

??? success "Answer"

    ```python
    --8<-- "snippets/{module}/exercises.py:answer"
    ```

    <!--pytest-codeblocks:expected-output-->
    ```text
{answer}    ```

## References and further reading

- Vaswani et al., [Attention Is All You Need](https://arxiv.org/abs/1706.03762), arXiv 1706.03762,
  2017.
- PyTorch documentation:
  [`torch.softmax`](https://docs.pytorch.org/docs/stable/generated/torch.softmax.html).
- Dive into Deep Learning: [Attention Mechanisms and
  Transformers](https://d2l.ai/chapter_attention-mechanisms-and-transformers/index.html).
- [The Annotated Transformer](https://nlp.seas.harvard.edu/annotated-transformer/).
- This site was rewritten from an article of the Chinese series
  "PyTorch 2.x 深度学习专题【左扬精讲】" (the "source article" of the FAQ), whose approach
  follows PP鲁's Zhihu article
  [注意力机制到底在做什么，Q/K/V 怎么来的？一文读懂 Attention 注意力机制](https://zhuanlan.zhihu.com/p/414084879)
  (in Chinese).
""",
    "zh": """---
description: 'TODO 一行：本章算的是什么。'
---

# {number}. {title}

**本章回答的问题：** TODO 本章回答的问题？

TODO 用平常话讲清思路，再用一个贯穿全章的例子手算一遍。

!!! abstract "学完本章，你能"

    - TODO 学完本章能做到的事。

## {number}.1 TODO 第一步

TODO 下面这段代码展示了什么。

```python
--8<-- "snippets/{module}/example.py:weights"
```

<!--pytest-codeblocks:expected-output-->
```text
{output}```

## 小结

TODO 用几句话概括本章。

## 练习

**1.（回忆）** TODO

??? success "答案"

    TODO

**2.（理解）** TODO

??? success "答案"

    TODO

**3.（动手）** TODO（这里：一行相等的分数经过 softmax 得到什么）。

??? success "答案"

    ```python
    --8<-- "snippets/{module}/exercises.py:answer"
    ```

    <!--pytest-codeblocks:expected-output-->
    ```text
{answer}    ```

## 参考资料与延伸阅读

- Vaswani 等，[Attention Is All You Need](https://arxiv.org/abs/1706.03762)，
  arXiv 1706.03762，2017。
- PyTorch 文档：[`torch.softmax`](https://docs.pytorch.org/docs/stable/generated/torch.softmax.html)。
- 《动手学深度学习》的
  [注意力机制与 Transformer](https://zh.d2l.ai/chapter_attention-mechanisms/index.html)。
- [The Annotated Transformer](https://nlp.seas.harvard.edu/annotated-transformer/)。
- 本站由“PyTorch 2.x 深度学习专题【左扬精讲】”系列的一篇文章（FAQ 里称为“原文”）改写而来，
  那篇文章的讲法借鉴了 PP鲁 的知乎文章
  [《注意力机制到底在做什么，Q/K/V 怎么来的？一文读懂 Attention 注意力机制》](https://zhuanlan.zhihu.com/p/414084879)。
""",
}


def printed(path: Path) -> str:
    """What a snippet file prints when run as a script: the real output its page shows."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(path), run_name="__main__")
    return out.getvalue()


def add_to_nav(text: str, slug: str) -> str:
    """mkdocs.yml with ``- <slug>.md`` as the last entry of its chapter list (the nav's first
    section)."""
    last = config.chapters()[-1]
    line = re.search(rf"^(\s*)- {re.escape(last)}\.md\s*$", text, re.M)
    if line is None:
        raise ValueError(f"mkdocs.yml: no nav line for the last chapter, {last}.md")
    return text[: line.end()] + f"\n{line[1]}- {slug}.md" + text[line.end() :]


def new_chapter(slug: str, titles: dict[str, str]) -> list[Path]:
    """Write the chapter's files under ``root`` (the repository this module is in); return
    them."""
    if not SLUG.fullmatch(slug):
        raise ValueError(f"{slug!r}: a slug is lower-case words joined by '-', e.g. 'kv-cache'")
    if slug in config.chapters() or (config.DOCS / f"{slug}.en.md").exists():
        raise ValueError(f"{slug!r} exists already")
    root = config.ROOT
    module = slug.replace("-", "_")
    number = len(config.chapters()) + 1
    package = root / "snippets" / module
    package.mkdir(parents=True)
    files = {
        package / "__init__.py": f'"""Chapter {number}: {titles["en"]} (docs/{slug}.*.md)."""\n',
        package / "example.py": EXAMPLE.format(title=titles["en"]),
        package / "exercises.py": EXERCISES.format(title=titles["en"]),
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    output = printed(package / "example.py")
    answer = "".join(f"    {line}\n" for line in printed(package / "exercises.py").splitlines())
    for lang, template in PAGE.items():
        page = root / "docs" / f"{slug}.{lang}.md"
        values = {"number": number, "title": titles[lang], "module": module}
        page.write_text(template.format(**values, output=output, answer=answer), encoding="utf-8")
        files[page] = ""
    test = root / "tests" / "examples" / f"test_{module}.py"
    test.write_text(TEST.format(number=number, slug=slug, module=module), encoding="utf-8")
    nav = root / "mkdocs.yml"
    nav.write_text(add_to_nav(nav.read_text(encoding="utf-8"), slug), encoding="utf-8")
    return [*files, test, nav]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slug", help="the page's name, e.g. kv-cache")
    parser.add_argument("title_en", help="the English title")
    parser.add_argument("title_zh", help="the Chinese title")
    args = parser.parse_args()
    for path in new_chapter(args.slug, {"en": args.title_en, "zh": args.title_zh}):
        print(path.relative_to(config.ROOT))


if __name__ == "__main__":
    main()
