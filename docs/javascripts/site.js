// Copy buttons for code blocks. Material's own (feature content.code.copy) set up each block with work that
// cost long pages 300-400 ms of blocked main thread in Lighthouse's mobile profile. These buttons use the same
// markup, so Material's styles and its clipboard handler (with its "copied" message) still apply.
// Material gives every <pre> its id ("__code_N") when it mounts the page; document$ emits after that.
document$.subscribe(() => document.querySelectorAll(".md-typeset .highlight > pre[id] > code").forEach((code) => {
  const pre = code.parentElement;
  if (pre.querySelector(".md-code__nav")) return;
  const button = document.createElement("button");
  button.className = "md-code__button";
  button.dataset.mdType = "copy";
  button.dataset.clipboardTarget = `#${pre.id} > code`;
  button.setAttribute("aria-label", document.documentElement.lang === "zh" ? "复制" : "Copy to clipboard");
  const nav = document.createElement("nav");
  nav.className = "md-code__nav";
  nav.append(button);
  pre.insertBefore(nav, code);
}));

// Notebook pages: code and output areas that scroll sideways must be reachable with the keyboard.
document$.subscribe(() => {
  const areas = [...document.querySelectorAll(".jp-Notebook .highlight-ipynb, .jp-OutputArea-output pre")];
  areas.filter((el) => el.scrollWidth > el.clientWidth).forEach((el) => el.setAttribute("tabindex", "0"));
});

// The search dialog needs an accessible name (Lighthouse: aria-dialog-name); Material gives it none.
document$.subscribe(() => {
  const dialog = document.querySelector('.md-search[role="dialog"]');
  if (dialog) dialog.setAttribute("aria-label", document.documentElement.lang === "zh" ? "搜索" : "Search");
});
