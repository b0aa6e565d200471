"""Chinese text set as Chinese: a source line that breaks between two CJK characters joins the next
one.

HTML turns a line break into a space, and Chinese puts none between characters, so "注意力：\\n点积"
would show "注意力： 点积". What counts is what a reader sees at the break: the last character of
a link's text or a bold span (``[代码仓库](url)``, ``**点积**``) and the first of the next line's.
Lines inside code fences are left as they are, and so is a line that ends a heading, a table row or
a block's opening line. The chapter pages (``qkvsite.plugin``) and the Chinese notebooks
(``qkvsite.notebooks``) are joined alike.
"""

import re

from qkvsite.dialect import scan

CJK = "\u2e80-\u2fff\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
# a line's last visible character: after it, only a link's target or emphasis marks
ENDS_CJK = re.compile(f"[{CJK}](?:\\]\\([^)\\s]*\\)|[*_])*$")
# a line's first: before it, only emphasis marks or a link's opening bracket
STARTS_CJK = re.compile(f"^[ \\t]*(?:[*_]+|\\[)*[{CJK}]")
# a heading, table row, admonition, caption block, HTML
OWN_LINE = re.compile(r"^\s*(#|\||!!!|\?\?\?|///|<)")


def join_cjk_lines(markdown: str) -> str:
    lines = markdown.split("\n")
    code = {i for fence in scan(markdown) for i in range(fence.start, fence.end + 1)}
    out: list[str] = []
    for i, line in enumerate(lines):
        joins = i and not {i - 1, i} & code and not OWN_LINE.match(lines[i - 1])
        if joins and ENDS_CJK.search(out[-1]) and STARTS_CJK.match(line):
            out[-1] += line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)
