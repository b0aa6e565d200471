// A link to a FAQ question from before the FAQ had a page per group (faq/#q12) opens the question's page: the
// list of questions (faq.md) links every question, and this page has no element with that id.
const moved = /^#q\d+$/.test(location.hash) && !document.getElementById(location.hash.slice(1))
  && document.querySelector(`.md-content a[href$="${location.hash}"]`);
if (moved) location.replace(moved.href);

// A copy button in Material's markup at the top of a <pre>; `data` is Material's clipboard attributes
// (clipboardTarget or clipboardText). A label of its own is also the button's tooltip.
function addCopyButton(pre, data, label) {
  if (pre.querySelector(":scope > .md-code__nav")) return;
  const button = document.createElement("button");
  button.className = "md-code__button";
  button.dataset.mdType = "copy";
  Object.assign(button.dataset, data);
  button.setAttribute("aria-label", label || (document.documentElement.lang === "zh" ? "复制" : "Copy to clipboard"));
  if (label) button.title = label;
  const nav = document.createElement("nav");
  nav.className = "md-code__nav";
  nav.append(button);
  pre.prepend(nav);
}

// Copy buttons for code blocks. Material's own (feature content.code.copy) set up each block with work that
// cost long pages 300-400 ms of blocked main thread in Lighthouse's mobile profile; with content.lazy (mkdocs.yml)
// Material sets up a block only once it is scrolled into view. These buttons use the same markup, so Material's
// styles and its clipboard handler (with its "copied" message) still apply, and they point at the <code> by an id
// of their own: Material gives the <pre> its id only when it sets the block up.
// An output block (.qkv-output) gets no button: it is not code. A Python block that continues the one above
// (.qkv-cont, set by qkvsite.hooks.sources) copies the whole chain, so that the pasted text runs on its own.
document$.subscribe(() => {
  const zh = document.documentElement.lang === "zh";
  let chain = [];
  document.querySelectorAll(".md-typeset .highlight").forEach((block, n) => {
    const code = block.querySelector(":scope > pre > code");
    if (!code || block.classList.contains("qkv-output")) return;
    const pre = code.parentElement;
    let copied = [pre];
    if (block.classList.contains("language-python")) {
      chain = block.classList.contains("qkv-cont") ? [...chain, pre] : [pre];
      copied = chain;
    }
    if (copied.length === 1) {
      code.id ||= `qkv-code-${n}`;
      addCopyButton(pre, { clipboardTarget: `#${code.id}` });
    } else {
      const above = copied.length - 1;
      const text = copied.map((p) => p.querySelector("code").textContent.trimEnd()).join("\n\n");
      const label = zh ? `复制这段代码和它接续的上面 ${above} 段` : `Copy this block with the ${above} above it that it continues`;
      addCopyButton(pre, { clipboardText: text }, label);
    }
  });
});

// Notebook pages: each code cell gets the same copy button; it copies the cell's source, which the page keeps as
// text beside the highlighted code (mkdocs-jupyter's .clipboard-copy-txt, id cell-N).
document$.subscribe(() => {
  document.querySelectorAll(".jp-Notebook .highlight-ipynb + .clipboard-copy-txt[id]").forEach((source) => {
    const pre = source.previousElementSibling.querySelector(":scope > pre");
    if (pre) addCopyButton(pre, { clipboardTarget: `#${source.id}` });
  });
});

// Code that scrolls sideways must be reachable with the keyboard (Material does this for a block only once it has
// set the block up, see above). After the next frame the page's layout is already computed, so reading the widths
// costs little; every width is read before any attribute is written.
document$.subscribe(() => requestAnimationFrame(() => setTimeout(() => {
  const areas = [...document.querySelectorAll(".md-typeset pre > code, .jp-Notebook :is(.highlight-ipynb > pre, .jp-OutputArea-output pre, .jp-RenderedMarkdown)")];
  areas.filter((el) => el.scrollWidth > el.clientWidth).forEach((el) => el.setAttribute("tabindex", "0"));
})));

// The search dialog needs an accessible name (Lighthouse: aria-dialog-name); Material gives it none.
document$.subscribe(() => {
  const dialog = document.querySelector('.md-search[role="dialog"]');
  if (dialog) dialog.setAttribute("aria-label", document.documentElement.lang === "zh" ? "搜索" : "Search");
});

// The language switcher keeps the reader's section: the same heading in the other edition. Both editions have the
// same headings in the same order; anchors.json (qkvsite.hooks.material_fixes) lists each page's heading ids.
document.addEventListener("click", async (event) => {
  const link = event.target.closest("a.md-select__link[hreflang]");
  const here = decodeURIComponent(location.hash.slice(1));
  if (!link || !here) return;
  event.preventDefault();
  let target = link.href;
  try {
    const config = JSON.parse(document.getElementById("__config").textContent);
    const base = new URL(config.base.replace(/\/?$/, "/"), location.href);
    const pages = await (await fetch(new URL("anchors.json", base))).json();
    const lang = document.documentElement.lang;
    const page = decodeURIComponent(location.pathname).slice(decodeURIComponent(base.pathname).length);
    const ids = pages[page] || {};
    const index = (ids[lang] || []).indexOf(here);
    const other = (ids[link.hreflang] || [])[index];
    if (index >= 0 && other) target = `${link.href.split("#")[0]}#${encodeURIComponent(other)}`;
  } finally {
    location.href = target;
  }
});
