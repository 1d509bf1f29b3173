/* metajudge report.html: plain JavaScript, no dependencies. Dataset text is only ever written
   with textContent (never innerHTML), so HTML in responses shows as text. */
"use strict";
const ERRORS = [];
window.addEventListener("error", (e) => ERRORS.push(String(e.message)));
const _cerr = console.error.bind(console);
console.error = (...a) => { ERRORS.push(a.map(String).join(" ")); _cerr(...a); };
const D = JSON.parse(document.getElementById("data").textContent);
const PAGE = 50;
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
  return e;
}
const fmt = (v, nd = 3) => (v === null || v === undefined ? "–" : typeof v === "number" ? v.toFixed(nd) : String(v));
const sortVal = (c) => (c === null || c === undefined ? -Infinity : typeof c === "object" ? c.v : c);

function cell(c, nd = 3) {
  if (c && typeof c === "object") {
    const band = c.lo === null && c.m ? `(${c.m})` : `[${fmt(c.lo, nd)}, ${fmt(c.hi, nd)}]` + (c.m ? ` ${c.m}` : "");
    return el("td", { class: "num" }, fmt(c.v, nd), " ", el("span", { class: "ci" }, band));
  }
  return typeof c === "number" ? el("td", { class: "num" }, Number.isInteger(c) ? String(c) : fmt(c, nd)) : el("td", {}, c === null || c === undefined ? "–" : String(c));
}

/* ---------- overview tables (sortable) ---------- */
function drawTable(t, idx) {
  const tb = el("tbody");
  const table = el("table", { class: "sortable", id: `t${idx}` });
  const tr = el("tr");
  t.columns.forEach((c, j) => {
    const th = el("th", { "data-col": j }, c);
    th.addEventListener("click", () => sortTable(t, tb, th, j));
    tr.append(th);
  });
  table.append(el("thead", {}, tr), tb);
  fillTable(t, tb, t.rows);
  return t.note ? [el("h2", {}, t.title), table, el("p", { class: "how" }, t.note)] : [el("h2", {}, t.title), table];
}
function fillTable(t, tb, rows) {
  tb.replaceChildren();
  const nd = t.nd ?? 3; // decimals of the run's scale (4 on 0-1, 2 at x100)
  for (const r of rows) tb.append(el("tr", {}, ...r.map((c) => cell(c, nd))));
  for (const r of t.refs || []) tb.append(el("tr", { class: "ref" }, ...r.map((c) => cell(c, nd))));
}
function sortTable(t, tb, th, j) {
  const desc = !th.classList.contains("desc");
  th.parentNode.querySelectorAll("th").forEach((h) => h.classList.remove("asc", "desc"));
  th.classList.add(desc ? "desc" : "asc");
  const rows = [...t.rows].sort((a, b) => {
    const x = sortVal(a[j]), y = sortVal(b[j]);
    const c = typeof x === "string" || typeof y === "string" ? String(x).localeCompare(String(y)) : x - y;
    return desc ? -c : c;
  });
  fillTable(t, tb, rows);
}

/* ---------- item details ---------- */
function textBox(title, text) {
  return el("div", { class: "box" }, el("h4", {}, title), el("div", { class: "text" }, text === null || text === undefined ? "(no text)" : text));
}
function tableBox(t) {
  const table = el("table", {}, el("thead", {}, el("tr", {}, ...t.header.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...t.rows.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, c))))));
  return el("div", { class: "box" }, el("h4", {}, "Table" + (t.title ? ": " + t.title : "")), table);
}
function respBox(k, title) {
  const r = D.resp[k];
  const box = textBox(`${title}${r.sys}`, r.text);
  if (r.labels) box.append(el("div", {}, "human labels per annotator: " + JSON.stringify(r.labels)));
  if (r.sc) box.append(el("div", {}, "scores: " + Object.entries(r.sc).map(([m, v]) => `${m} = ${fmt(v, 4)}`).join(", ")));
  for (const [m, d] of Object.entries(r.det || {})) {
    if (d.explanation) box.append(el("div", { class: "expl" }, el("b", {}, `${m}: the judge's explanation`), el("div", { class: "text" }, d.explanation)));
    box.append(el("details", {}, el("summary", {}, `${m}: details (raw reply, claims, verdicts)`), el("pre", { class: "json" }, JSON.stringify(d, null, 1))));
  }
  return box;
}
function detail(row, extra) {
  const it = D.items[row.i];
  const td = el("td", { colspan: 9 });
  td.append(el("div", { class: "box" }, el("h4", {}, `Input ${it.id}${it.sub ? " · " + it.sub : ""}`), el("div", { class: "text" }, it.q)));
  if (it.ctx) td.append(textBox("Context", it.ctx));
  for (const t of it.tables || []) td.append(tableBox(t));
  (it.docs || []).forEach((d, j) => td.append(el("details", {}, el("summary", {}, `Document ${j + 1}`), el("div", { class: "text" }, d))));
  const side = el("div", { class: "side" });
  row.r.forEach((k, j) => side.append(el("div", {}, respBox(k, row.r.length === 2 ? `Response ${"ab"[j]}: ` : "Response: "))));
  td.append(side);
  if (it.ref) td.append(textBox("Reference", it.ref));
  if (row.l) td.append(el("div", { class: "box" }, el("h4", {}, "Human labels per annotator"), JSON.stringify(row.l)));
  if (extra) td.append(extra);
  return el("tr", { class: "detail" }, td);
}

/* ---------- disagreement browser ---------- */
const B = { view: 0, page: 0, rows: [] };
function labelKey(h) { return h === null || h === undefined ? "none" : typeof h === "string" ? h : (Math.round(h * 2) / 2).toString(); }
function initBrowser() {
  const vs = $("view");
  D.views.forEach((v, j) => vs.append(el("option", { value: j }, `${v.name} · ${v.dim} (${v.rows.length}${v.total ? " of " + v.total : ""})`)));
  const subs = [...new Set(D.items.map((x) => x.sub).filter((s) => s))].sort();
  $("fsub").append(el("option", { value: "" }, "all"), ...subs.map((s) => el("option", { value: s }, s)));
  for (const id of ["view", "fsub", "flab", "fwrong", "fsplit"]) $(id).addEventListener("change", () => { if (id === "view") fillLabels(); B.page = 0; filter(); });
  $("prev").addEventListener("click", () => { B.page = Math.max(0, B.page - 1); drawRows(); });
  $("next").addEventListener("click", () => { B.page += 1; drawRows(); });
  fillLabels(); filter();
}
function fillLabels() {
  const v = D.views[+$("view").value || 0];
  const labs = v ? [...new Set(v.rows.map((r) => labelKey(r.h)))].sort((a, b) => parseFloat(a) - parseFloat(b)) : [];
  $("flab").replaceChildren(el("option", { value: "" }, "all"), ...labs.map((s) => el("option", { value: s }, s)));
}
function filter() {
  const v = D.views[+$("view").value || 0];
  if (!v) { $("count").textContent = "no per-item data in this run"; return; }
  const sub = $("fsub").value, lab = $("flab").value, w = $("fwrong").checked, s = $("fsplit").checked;
  B.rows = v.rows.filter((r) => (!sub || D.items[r.i].sub === sub) && (!lab || labelKey(r.h) === lab) && (!w || r.w) && (!s || r.s));
  $("how").textContent = "Ranked by " + v.how + (v.cut ? ". " + v.cut[0].toUpperCase() + v.cut.slice(1) + "." : "");
  $("count").textContent = `${B.rows.length} of ${v.rows.length}` + (v.total ? ` shown (of ${v.total})` : "");
  drawRows();
}
function drawRows() {
  const v = D.views[+$("view").value || 0];
  const verdict = v.kind === "verdict";
  const interval = v.kind === "interval";
  const pages = Math.max(1, Math.ceil(B.rows.length / PAGE));
  B.page = Math.min(B.page, pages - 1);
  const head = verdict ? ["#", "input", "judge A/B", "judge B/A", "human", "flags", "question"] : interval ? ["#", "input", "judge", v.set ? "prediction set" : "interval", v.set ? "set size" : "width", "human", "flags", "question"] : ["#", "input", v.kind === "pair" ? "d = s(b)−s(a)" : "score", "normalised", "human mean", "gap", "flags", "question"];
  $("rows").tHead.replaceChildren(el("tr", {}, ...head.map((h) => el("th", {}, h))));
  const tb = $("rows").tBodies[0];
  tb.replaceChildren();
  B.rows.slice(B.page * PAGE, (B.page + 1) * PAGE).forEach((r, j) => {
    const it = D.items[r.i];
    const flags = el("td", {}, r.w ? el("span", { class: "flag" }, interval ? "human outside" : "judge wrong") : null, r.s ? el("span", { class: "flag split" }, "humans split") : null);
    const cells = verdict ? [el("td", {}, r.m === null ? "unparsed" : dec(r.m)), el("td", {}, r.n === null ? "unparsed" : dec(r.n)), cell(r.h)] : interval ? [cell(r.m), cell(r.n), cell(r.g), cell(r.h)] : [cell(r.m), cell(r.n), cell(r.h), cell(r.g)];
    const tr = el("tr", { class: "row" }, el("td", { class: "num" }, String(B.page * PAGE + j + 1)), el("td", {}, it.id), ...cells, flags, el("td", { class: "snip" }, it.q));
    tr.addEventListener("click", () => toggle(tr, r, verdict ? rawBox(r) : null));
    tb.append(tr);
  });
  $("page").textContent = `page ${B.page + 1} of ${pages}`;
}
function rawBox(r) {
  return el("div", { class: "box" }, el("h4", {}, "Judge raw replies (first characters kept by the run)"), el("div", { class: "text" }, `A/B: ${r.raw[0]}\nB/A: ${r.raw[1]}`));
}
function toggle(tr, r, extra) {
  if (tr.nextSibling && tr.nextSibling.classList.contains("detail")) { tr.nextSibling.remove(); return; }
  tr.after(detail(r, extra));
}

/* ---------- backbone flips ---------- */
const C = { page: 0 };
function initCompare() {
  if (!D.compare.length) return;
  D.compare.forEach((c, j) => $("cview").append(el("option", { value: j }, `${c.x} vs ${c.y} (${c.rows.length} of ${c.n} pairs decided differently; tie band |d| ≤ ${c.eps || 0})`)));
  $("cview").addEventListener("change", () => { C.page = 0; drawCompare(); });
  $("cprev").addEventListener("click", () => { C.page = Math.max(0, C.page - 1); drawCompare(); });
  $("cnext").addEventListener("click", () => { C.page += 1; drawCompare(); });
  drawCompare();
}
const dec = (d) => (d > 0 ? "b better" : d < 0 ? "a better" : "tie");
function drawCompare() {
  const c = D.compare[+$("cview").value || 0];
  const pages = Math.max(1, Math.ceil(c.rows.length / PAGE));
  C.page = Math.min(C.page, pages - 1);
  $("crows").tHead.replaceChildren(el("tr", {}, ...["#", "input", "a", "b", c.x, c.y, "kind", "question"].map((h) => el("th", {}, h))));
  const tb = $("crows").tBodies[0];
  tb.replaceChildren();
  c.rows.slice(C.page * PAGE, (C.page + 1) * PAGE).forEach((r, j) => {
    const [i, rr, dx, dy, flip] = r;
    const it = D.items[i];
    const tr = el("tr", { class: "row" }, el("td", { class: "num" }, String(C.page * PAGE + j + 1)), el("td", {}, it.id), el("td", {}, D.resp[rr[0]].sys), el("td", {}, D.resp[rr[1]].sys), el("td", {}, dec(dx)), el("td", {}, dec(dy)), el("td", {}, flip ? "flip" : "tie vs win"), el("td", { class: "snip" }, it.q));
    tr.addEventListener("click", () => toggle(tr, { i, r: rr }, null));
    tb.append(tr);
  });
  $("cpage").textContent = `page ${C.page + 1} of ${pages}`;
  $("ccount").textContent = `${c.rows.length} pairs`;
}

/* the forest plot of calibrate estimate and the judge card is inline SVG drawn in Python
   (metajudge/reports/svg.py); the self-test measures it below */
/* ---------- tabs, start, self-test ---------- */
function showTab(name) {
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("on", b.dataset.tab === name));
  document.querySelectorAll("section.tab").forEach((s) => { s.hidden = s.id !== name; });
}
function selftest() {
  const out = { errors: ERRORS, load_ms: LOAD_MS };
  if (D.forest) {
    const marks = [...document.querySelectorAll("#forest .fmark")];
    out.forest = { rows: D.forest.rows.length, cal: marks.filter((m) => m.classList.contains("cal")).length, raw: marks.filter((m) => m.classList.contains("raw")).length, names: [...document.querySelectorAll("#forest .fname")].map((t) => t.textContent), width: document.querySelector("#forest").getBoundingClientRect().width, titles: marks.map((m) => m.textContent), x: marks.map((m) => Math.round(m.getBoundingClientRect().left + m.getBoundingClientRect().width / 2)) };
  }
  const t = D.tables[0];
  const tb = document.querySelector("#t0 tbody");
  const first = () => (tb.rows[0] ? tb.rows[0].textContent : "");
  let j = t.columns.findIndex((_, c) => new Set(t.rows.map((r) => JSON.stringify(r[c]))).size > 1);
  if (j < 0) j = 0;
  const th = document.querySelector(`#t0 th[data-col="${j}"]`);
  th.click(); const a = first(); th.click(); const b = first();
  out.sort_changed = t.rows.length < 2 || a !== b;
  out.n_table_rows = t.rows.length;
  showTab("browser");
  const row = document.querySelector("#rows tbody tr.row");
  out.browser_rows = document.querySelectorAll("#rows tbody tr.row").length;
  out.browser_how = $("how").textContent;
  out.browser_count = $("count").textContent;
  if (row) row.click();
  const det = document.querySelector("#rows tr.detail");
  out.detail_text_chars = det ? det.textContent.length : 0;
  out.detail_has_response = !!(det && det.querySelector(".side .text") && det.querySelector(".side .text").textContent.length > 0);
  out.detail_text = det ? det.textContent.slice(0, 4000) : "";
  out.script_elements = document.querySelectorAll("script").length;
  out.page_width = document.documentElement.scrollWidth;
  out.view_width = window.innerWidth;
  out.tables_scrolling = [...document.querySelectorAll("#tables table, #lead-tables table")].filter((t) => t.scrollWidth > t.clientWidth + 1).map((t) => t.id);
  out.figures = [...document.querySelectorAll("svg.figure")].map((s) => s.id);
  if (D.compare.length) {
    showTab("compare");
    const cr = document.querySelector("#crows tbody tr.row");
    if (cr) cr.click();
    out.compare_detail = !!document.querySelector("#crows tr.detail");
    showTab("browser");
  }
  out.errors = ERRORS;
  const pre = $("selftest");
  pre.textContent = JSON.stringify(out);
  pre.hidden = false;
}
const T0 = performance.now();
let LOAD_MS = null;
const LEAD = $("lead-tables") ? D.lead_tables || 0 : 0; // the first tables beside the lead picture
D.tables.forEach((t, j) => $(j < LEAD ? "lead-tables" : "tables").append(...drawTable(t, j)));
document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
initBrowser();
initCompare();
LOAD_MS = performance.now();
const Q = new URLSearchParams(location.search);
if (Q.get("tab")) showTab(Q.get("tab"));
if (Q.get("open") !== null) { const r = document.querySelectorAll("#rows tbody tr.row")[+Q.get("open") || 0]; if (r) r.click(); }
if (Q.get("selftest")) selftest();
void T0;
