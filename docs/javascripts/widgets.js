// The figures a reader can move (qkvsite/widgets.py). A page that shows one holds
// <div class="qkv-widget" data-widget="<name>" data-src="<its JSON>">, right after the static
// figure it extends, and loads this script (qkvsite/hooks/widgets.py). The JSON holds every state
// the widget can show, computed at build time by a tested example (figures/widgets.py), with its
// labels in the page's language: this script only picks a state and draws it. The static figure
// stays for readers without JavaScript and for print.

const STYLE = `
.qkv-widget { margin: 0 0 1.5em; padding: 0.8em;
  border: 1px solid var(--md-default-fg-color--lightest); border-radius: 0.2rem;
  color: var(--md-default-fg-color); font-size: 0.75rem; }
.qkv-widget:empty { display: none; }
.qkv-widget .qkv-w-title { margin: 0 0 0.6em; font-weight: 700; }
.qkv-widget label, .qkv-widget .qkv-w-pick { display: block; margin-bottom: 0.3em; }
.qkv-widget input[type=range] { width: 100%; accent-color: var(--md-accent-fg-color); }
.qkv-widget .qkv-w-buttons { display: flex; flex-wrap: wrap; gap: 0.4em; margin-bottom: 0.6em; }
.qkv-widget button { font: inherit; color: var(--md-default-fg-color);
  background: var(--md-default-bg-color); border: 1px solid var(--md-default-fg-color--light);
  border-radius: 0.2rem; padding: 0.3em 0.7em; cursor: pointer; }
.qkv-widget button[aria-pressed=true] { background: var(--md-primary-fg-color);
  color: var(--md-primary-bg-color); border-color: var(--md-primary-fg-color); }
.qkv-widget button:focus-visible, .qkv-widget input:focus-visible {
  outline: 2px solid var(--md-accent-fg-color); outline-offset: 2px; }
.qkv-widget .qkv-w-live { margin: 0.6em 0 0; }
.qkv-widget .qkv-w-bars { display: grid; grid-template-columns: auto 1fr 1fr; gap: 0.25em 0.6em;
  align-items: center; margin: 0; }
.qkv-widget .qkv-w-bars > span { min-width: 0; }
.qkv-widget .qkv-w-head { font-weight: 700; }
.qkv-widget .qkv-w-cell { display: flex; align-items: center; gap: 0.4em; }
.qkv-widget .qkv-w-track { flex: 1; height: 0.8em;
  background: var(--md-default-fg-color--lightest); }
.qkv-widget .qkv-w-track, .qkv-widget .qkv-w-fill { display: block; }
.qkv-widget .qkv-w-fill { height: 100%; }
.qkv-widget .qkv-w-raw { background: #d62728; }
.qkv-widget .qkv-w-scaled { background: #1f77b4; }
.qkv-widget .qkv-w-weight { background: var(--md-primary-fg-color); }
[data-md-color-scheme=slate] .qkv-widget .qkv-w-scaled { background: #5aa9e6; }
[data-md-color-scheme=slate] .qkv-widget .qkv-w-raw { background: #f0605e; }
.qkv-widget .qkv-w-num { font-variant-numeric: tabular-nums; min-width: 2.8em; text-align: right; }
.qkv-widget table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
.qkv-widget .qkv-w-legend { margin: 0.4em 0 0; color: var(--md-default-fg-color--light); }
.qkv-widget th, .qkv-widget td { padding: 0.2em 0.35em; text-align: center; font-weight: 400; }
.qkv-widget td.qkv-w-seen { background: var(--md-primary-fg-color);
  color: var(--md-primary-bg-color); }
.qkv-widget td.qkv-w-cut, .qkv-widget th.qkv-w-cut {
  border-left: 2px dashed var(--md-default-fg-color--light); }
.qkv-widget .qkv-w-scroll { overflow-x: auto; }
@media print { .qkv-widget { display: none; } }
`;

// A number as Python's f"{x:.3f}" prints it (both round the exact binary value).
const fixed = (x) => x.toFixed(3);
const fill = (template, values) => template.replace(/\{(\w*)\}/g, (_, k) => values[k]);

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

// The parts every widget has: a title, its control, what it draws, and a live region that reads
// out the numbers.
function frame(root, data) {
  const id = `qkv-w-${root.dataset.widget}`;
  const title = element("p", { class: "qkv-w-title", id: `${id}-title`, text: data.text.title });
  const live = element("p", { class: "qkv-w-live", "aria-live": "polite", id: `${id}-live` });
  const body = element("div", { class: "qkv-w-body" });
  root.setAttribute("role", "group");
  root.setAttribute("aria-labelledby", title.id);
  root.replaceChildren(title);
  return { id, live, body };
}

// Buttons of which one is pressed: Tab reaches them, Enter or Space presses one.
function buttons(id, label, names, onPick) {
  const group = element("div", {
    class: "qkv-w-buttons", role: "group", "aria-labelledby": `${id}-pick`,
  });
  const each = names.map((name, i) => {
    const button = element("button", {
      type: "button", "aria-pressed": "false", "data-state": i, text: name,
    });
    button.addEventListener("click", () => pick(i));
    return button;
  });
  function pick(i) {
    each.forEach((b, j) => b.setAttribute("aria-pressed", String(i === j)));
    onPick(i);
  }
  group.append(...each);
  const heading = element("span", { class: "qkv-w-pick", id: `${id}-pick`, text: label });
  return { nodes: [heading, group], pick };
}

function bar(value, kind) {
  const fillBar = element("span", { class: `qkv-w-fill qkv-w-${kind}` });
  fillBar.style.width = `${(value * 100).toFixed(1)}%`;
  return element(
    "span",
    { class: "qkv-w-cell" },
    element("span", { class: "qkv-w-track", "aria-hidden": "true" }, fillBar),
    element("span", { class: "qkv-w-num", text: fixed(value) }),
  );
}

// Chapter 3: a slider over d_k; one row of weights without and with 1/√d_k.
function temperature(root, data) {
  const { id, live, body } = frame(root, data);
  const t = data.text;
  const slider = element("input", {
    type: "range", id: `${id}-slider`, min: 0, max: data.states.length - 1, step: 1, value: 0,
  });
  const label = element("label", { for: slider.id });
  function show(i) {
    const state = data.states[i];
    label.textContent = `${t.slider} = ${state.d_k}`;
    slider.setAttribute("aria-valuetext", `${t.slider} = ${state.d_k}`);
    const head = (text) => element("span", { class: "qkv-w-head", text });
    const rows = ["", t.raw, t.scaled].map(head);
    for (let j = 0; j < data.keys; j++) {
      const key = element("span", { text: fill(t.key, { "": j }) });
      rows.push(key, bar(state.raw[j], "raw"), bar(state.scaled[j], "scaled"));
    }
    body.replaceChildren(element("div", { class: "qkv-w-bars", "data-d-k": state.d_k }, ...rows));
    live.textContent = fill(t.summary, {
      d_k: state.d_k, raw: fixed(Math.max(...state.raw)), scaled: fixed(Math.max(...state.scaled)),
    });
  }
  slider.addEventListener("input", () => show(Number(slider.value)));
  root.append(label, slider, body, live);
  show(0);
}

// Chapter 2: pick the querying token; its weights over every token.
function roles(root, data) {
  const { id, live, body } = frame(root, data);
  const t = data.text;
  const control = buttons(id, t.pick, data.tokens, (i) => {
    const weights = data.states[i].weights;
    const rows = [];
    data.tokens.forEach((token, j) => {
      rows.push(element("span", { text: token }), bar(weights[j], "weight"));
    });
    const grid = element("div", { class: "qkv-w-bars", "data-token": i }, ...rows);
    grid.style.gridTemplateColumns = "auto 1fr";
    body.replaceChildren(grid);
    live.textContent = fill(t.summary, {
      token: data.tokens[i], weights: weights.map(fixed).join(", "),
    });
  });
  root.append(...control.nodes, body, live);
  control.pick(1);
}

// Chapter 8: the L_q × L_k causal mask, aligned to the top left or the bottom right.
function alignment(root, data) {
  const { id, live, body } = frame(root, data);
  const t = data.text;
  const cut = (k) => (k === data.cached ? "qkv-w-cut" : "");
  const control = buttons(id, t.pick, data.states.map((s) => t[s.mask]), (i) => {
    const state = data.states[i];
    const head = element("tr", {}, element("th", { scope: "col", text: t.keys }));
    for (let k = 0; k < data.keys; k++) {
      head.append(element("th", {
        scope: "col", class: cut(k), "aria-label": fill(t.key, { "": k }), text: String(k),
      }));
    }
    const rows = state.seen.map((row, r) => element(
      "tr", {},
      element("th", { scope: "row", text: fill(t.query, { "": data.queries[r] }) }),
      ...row.map((v, k) => element("td", {
        class: `${v ? "qkv-w-seen" : ""} ${cut(k)}`.trim(),
        title: v ? t.seen : t.hidden,
        text: String(v),
      })),
    ));
    const table = element(
      "table", { class: "qkv-w-grid", "data-mask": state.mask },
      element("thead", {}, head), element("tbody", {}, ...rows),
    );
    const scroll = {
      class: "qkv-w-scroll", tabindex: "0", role: "region", "aria-label": t[state.mask],
    };
    body.replaceChildren(
      element("div", scroll, table),
      element("p", { class: "qkv-w-legend", text: t.legend }),
    );
    const seen = (row) => row.reduce((a, b) => a + b, 0);
    live.textContent = state.seen
      .map((row, r) => fill(t.summary, { query: data.queries[r], keys: data.keys, n: seen(row) }))
      .join(t.sep);
  });
  root.append(...control.nodes, body, live);
  control.pick(0);
}

const KINDS = { temperature, roles, alignment };

async function start() {
  document.head.append(element("style", { text: STYLE }));
  for (const root of document.querySelectorAll(".qkv-widget[data-src]")) {
    const response = await fetch(root.dataset.src);
    const data = await response.json();
    KINDS[data.kind](root, data);
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
