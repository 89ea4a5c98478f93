// pulse web: draws the graph the server sends. A "shape" (entities and
// edges) comes when the topology changes; the values of each window follow
// it, aligned with the shape's lists. view.js picks what is drawn (open
// namespaces, a focus, nodes only), draw.js lays it out and moves it,
// panel.js draws the warnings and the detail; this file keeps the stream,
// the picture's values and the topic table. Every name comes from a
// segment, so every string goes into the page as a text node (textContent,
// setAttribute of plain values), never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const HISTORY = 300; // points per sparkline: five minutes at 1 s windows
const MIN_SCALE = 0.92; // the default view never draws a label (12 px) under 11 px

const state = {
  shape: null,        // the latest shape
  ix: null,           // PulseView.index of the shape
  keys: new Map(),    // graph id -> stable key, for the shape
  rows: [],           // the topic table's rows, aligned with the shape's topics
  opt: { open: new Set(), grouped: false, focus: null, nodesOnly: false, hideLeaves: false, hideInfra: false, builtins: false },
  chosen: false,      // the reader changed the grouping or leaves: a new shape keeps their choice
  view: null,         // what is drawn (PulseView.build)
  lay: null,          // where (PulseDraw.layout)
  sig: "",            // the drawn view's structure
  ents: new Map(),    // vertex key -> <g>
  edges: new Map(),   // view edge key -> <g>
  clusters: new Map(),// cluster key -> <g>
  frame: null,        // the latest values
  history: new Map(), // stable key -> {buf: Float32Array(HISTORY), n}: a ring, so the page's memory stays flat
  detail: null,       // the selected entity's detail, as /api/detail answered it
  selected: null,     // stable key
  frames: 0,
  layouts: 0,         // full layouts made (the tests read it)
};
window.__pulse = state; // read by the browser tests: frames drawn, last render time

const $ = (id) => document.getElementById(id);
let vp = null; // PulseDraw.viewport of the graph pane

function el(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function setText(node, text) { if (node && node.textContent !== text) node.textContent = text; }

function fmt(v, digits) { return v === undefined || v === null ? "-" : Number(v).toFixed(digits); }

function rate(hz) { return hz >= 1000 ? (hz / 1000).toFixed(1) + "k" : hz.toFixed(1); }

// byteRate is a bandwidth in SI units: "27.6 MB/s".
function byteRate(b) {
  const units = ["B/s", "kB/s", "MB/s", "GB/s"];
  let u = 0;
  while (b >= 999.5 && u < units.length - 1) { b /= 1000; u++; }
  return (u === 0 ? b.toFixed(0) : b >= 99.95 ? b.toFixed(0) : b >= 9.995 ? b.toFixed(1) : b.toFixed(2)) + " " + units[u];
}

// topicSub is a topic's second line: what it is part of, or its types.
function topicSub(t) {
  return t.introspects ? "service events of " + t.introspects : t.action ? t.part + " of action " + t.action : (t.types || []).join(", ");
}

function filterText() { return $("filter").value.trim().toLowerCase(); }

// ---------------------------------------------------------------- the view

// closedBox is the namespace box an entity is inside (grouped, no focus), or "".
function closedBox(key) {
  if (!state.view || !state.view.grouped) return "";
  const ns = PulseView.closedSpace(state.ix, state.opt, key);
  return ns ? "ns:" + ns : "";
}

// sizes gives each vertex the room its widest text will need.
function sizes(view) {
  const out = new Map();
  const served = PulseView.servicesOf(state.shape, state.ix);
  for (const v of view.vertices.values()) {
    let sample = "";
    if (v.kind === "node") {
      sample = "pid 8888888 · 188.8% · 8888 MiB";
      const sv = served.get(v.key);
      v.servicesLine = sv ? [sv.services ? sv.services + (sv.services > 1 ? " services" : " service") : "", sv.actions ? sv.actions + (sv.actions > 1 ? " actions" : " action") : ""].filter(Boolean).join(" · ") : "";
    } else if (v.kind === "topic") {
      sample = topicSub(state.ix.topicOf.get(v.key)) + " · lat p99 888.8 ms";
    } else {
      sample = `${v.counts.nodes} nodes · ${v.counts.topics} topics · 88888.8 msg/s`;
    }
    out.set(v.key, PulseDraw.vertexSize(v, sample));
  }
  return out;
}

// refresh builds the view and draws it: laid out anew when the reader asked
// for another view (or most of it is new), else extended (nothing moves).
function refresh(fromStream) {
  if (!state.shape) return;
  const view = PulseView.build(state.shape, state.ix, state.opt);
  const sig = PulseView.signature(view);
  if (sig !== state.sig || !state.lay) {
    const sz = sizes(view);
    const kept = state.lay ? [...view.vertices.keys()].filter((k) => state.lay.vertices.has(k)).length : 0;
    const fresh = !state.lay || !fromStream || kept < 0.75 * view.vertices.size;
    const t0 = performance.now();
    state.lay = fresh ? PulseDraw.layout(view, sz) : PulseDraw.extend(view, sz, state.lay);
    state.lastLayoutMs = performance.now() - t0;
    if (fresh) state.layouts++;
    state.view = view;
    state.sig = sig;
    draw(view, state.lay);
    if (fresh) fit();
  } else {
    state.view = view;
  }
  applyFilter();
  if (state.frame) render(state.frame);
}

function bounds() {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const p of [...state.lay.vertices.values(), ...state.lay.clusters.values()]) {
    x0 = Math.min(x0, p.x); y0 = Math.min(y0, p.y - 18); x1 = Math.max(x1, p.x + p.w); y1 = Math.max(y1, p.y + p.h);
  }
  return x0 === Infinity ? { x: 0, y: 0, w: 1, h: 1 } : { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

// fit shows the whole picture if it is legible so, else its top left.
function fit() { if (vp && state.lay) vp.fit(bounds(), MIN_SCALE); }

// draw makes (or moves) an element for every vertex, cluster and edge of the view, and drops the rest.
function draw(view, lay) {
  const root = $("viewport");
  const seen = new Set();
  for (const c of view.clusters.values()) {
    const key = c.key, p = lay.clusters.get(key);
    if (!p) continue;
    let g = state.clusters.get(key);
    if (!g) {
      g = el("g", { class: "cluster", "data-key": key });
      g.appendChild(el("rect", { rx: 6 }));
      const title = el("text", { class: "name" }, "▾ " + c.label);
      title.appendChild(el("title", {}, c.name + " (click to close)"));
      title.addEventListener("click", () => { state.opt.open.delete(c.name); for (const o of [...state.opt.open]) if (o.startsWith(c.name + "/")) state.opt.open.delete(o); refresh(false); });
      g.appendChild(title);
      state.clusters.set(key, g);
    }
    root.insertBefore(g, root.firstChild);
    const [rect, title] = g.children;
    rect.setAttribute("x", p.x); rect.setAttribute("y", p.y - 18); rect.setAttribute("width", p.w); rect.setAttribute("height", p.h + 18);
    title.setAttribute("x", p.x + 8); title.setAttribute("y", p.y - 4);
    seen.add(key);
  }
  for (const [key, g] of state.clusters) if (!seen.has(key)) { g.remove(); state.clusters.delete(key); }

  seen.clear();
  for (const v of view.vertices.values()) {
    const p = lay.vertices.get(v.key);
    let g = state.ents.get(v.key);
    if (g && (g.dataset.label !== v.label || g.dataset.lines !== String(v.servicesLine ? 3 : 2))) { g.remove(); g = null; }
    if (!g) {
      g = el("g", { class: "entity " + v.kind, "data-key": v.key, "data-kind": v.kind });
      g.appendChild(el("rect", { rx: v.kind === "node" ? 14 : v.kind === "namespace" ? 8 : 3 }));
      g.appendChild(el("text", { class: "name" }, v.kind === "namespace" ? "▸ " + v.label : v.label));
      g.appendChild(el("text", { class: "sub" }, ""));
      if (v.kind === "namespace") g.appendChild(el("text", { class: "sub traffic" }, ""));
      if (v.servicesLine) g.appendChild(el("text", { class: "sub services" }, v.servicesLine));
      g.appendChild(el("title", {}, v.name));
      g.dataset.label = v.label;
      g.dataset.name = v.name;
      g.dataset.lines = String(v.servicesLine ? 3 : 2);
      if (v.kind === "namespace") g.addEventListener("click", () => openNamespace(v.name));
      else {
        g.addEventListener("click", () => select(v.key));
        g.addEventListener("dblclick", () => focusOn(v.key));
      }
      state.ents.set(v.key, g);
    }
    root.appendChild(g);
    g.setAttribute("transform", `translate(${p.x},${p.y})`);
    const [rect, ...texts] = g.children;
    rect.setAttribute("width", p.w); rect.setAttribute("height", p.h);
    texts.filter((t) => t.tagName === "text").forEach((t, i) => { t.setAttribute("x", p.w / 2); t.setAttribute("y", 16 + i * 15); t.setAttribute("text-anchor", "middle"); });
    g.sub = texts[0].tagName === "text" ? texts[1] : null;
    g.traffic = g.querySelector("text.traffic");
    seen.add(v.key);
  }
  for (const [key, g] of state.ents) if (!seen.has(key)) { g.remove(); state.ents.delete(key); }

  seen.clear();
  const first = root.querySelector("g.entity");
  for (const e of view.edges) {
    let g = state.edges.get(e.key);
    if (!g) {
      g = el("g", { class: "edge", "data-from": e.from, "data-to": e.to, "data-kind": e.kind });
      g.appendChild(el("path", {}));
      g.appendChild(el("text", { "text-anchor": "middle" }));
      g.appendChild(el("title", {}));
      state.edges.set(e.key, g);
    }
    root.insertBefore(g, first); // under the entities
    g.view = e;
    const r = PulseDraw.edgePath(e, lay);
    g.children[0].setAttribute("d", r.d);
    g.children[1].setAttribute("x", r.lx); g.children[1].setAttribute("y", e.kind === "topic" ? r.ly - 4 : r.ly + 4);
    seen.add(e.key);
  }
  for (const [key, g] of state.edges) if (!seen.has(key)) { g.remove(); state.edges.delete(key); }
  for (const [k, g] of state.ents) g.classList.toggle("selected", k === state.selected);
}

// openNamespace opens a namespace box in place of its contents.
function openNamespace(ns) {
  state.opt.open.add(ns);
  refresh(false);
  const c = state.lay.clusters.get("c:" + ns);
  if (c) vp.fit({ x: c.x, y: c.y - 18, w: c.w, h: c.h + 18 }, MIN_SCALE); // the opened frame, from its title
}

// reveal makes an entity drawn: its namespaces opened (and the others
// closed), a focus it is not in left, builtins or leaves shown if it is one.
function reveal(key) {
  state.opt.open = new Set(state.ix.chain.get(key) || []); // its namespaces, the others closed: a small picture
  if (state.opt.focus && !PulseView.build(state.shape, state.ix, state.opt).vertices.has(key)) state.opt.focus = null;
  if (state.ix.kind.get(key) === "topic") {
    const t = state.ix.topicOf.get(key);
    if (PulseView.BUILTIN.has(t.name) || t.action || t.introspects) { state.opt.builtins = true; $("builtins").checked = true; }
    if (PulseView.INFRA.has(t.name)) { state.opt.hideInfra = false; $("infra").checked = true; }
    state.opt.hideLeaves = false; $("leaves").checked = true;
    state.opt.nodesOnly = false; $("nodesonly").checked = false;
  }
  refresh(false);
}

// search jumps to the entity the search box names (exactly, else the first containing it).
function search() {
  const q = $("search").value.trim();
  if (!q || !state.ix) return;
  let key = null;
  for (const [k, name] of state.ix.name) if (name === q && state.ix.kind.get(k) !== "service") { key = k; break; }
  if (!key && state.ix.spaces.has(q)) { state.opt.open = new Set(PulseView.prefixes(q + "/x")); refresh(false); return; }
  if (!key) for (const [k, name] of state.ix.name) if (state.ix.kind.get(k) !== "service" && name.toLowerCase().includes(q.toLowerCase())) { key = k; break; }
  if (!key) { $("search").classList.add("notfound"); return; }
  $("search").classList.remove("notfound");
  reveal(key);
  const p = state.lay.vertices.get(key);
  if (p) vp.center(p.x + p.w / 2, p.y + p.h / 2, 1);
  if (state.selected !== key) select(key);
}

// focusOn draws only key's neighbourhood, the hops the box says up and down.
function focusOn(key) {
  state.opt.focus = { key, hops: Number($("hops").value) || 1 };
  $("unfocus").hidden = false;
  refresh(false);
  const p = state.lay.vertices.get(key);
  if (p) vp.center(p.x + p.w / 2, p.y + p.h / 2, MIN_SCALE);
  if (state.selected !== key) select(key);
}

function unfocus() {
  state.opt.focus = null;
  $("unfocus").hidden = true;
  refresh(false);
}

// names fills the search box's suggestions: every node, topic and namespace.
function names() {
  const list = $("names");
  const all = new Set([...state.ix.name.values(), ...state.ix.spaces.keys()]);
  list.replaceChildren(...[...all].sort().map((n) => { const o = document.createElement("option"); o.value = n; return o; }));
}

// applyShape takes a new shape: its index, the topic table, and a view of it.
function applyShape(s) {
  const firstShape = !state.shape;
  state.shape = s;
  state.ix = PulseView.index(s);
  state.keys = state.ix.keys;
  if (!state.chosen) {
    state.opt.grouped = state.ix.large;
    state.opt.hideLeaves = state.opt.hideInfra = state.ix.large;
    $("grouped").checked = state.opt.grouped;
    $("leaves").checked = !state.opt.hideLeaves;
    $("infra").checked = !state.opt.hideInfra;
  }
  if (firstShape) applyHash();
  const body = $("topics").querySelector("tbody");
  state.rows = s.topics.map((t) => {
    const tr = document.createElement("tr");
    tr.dataset.topic = t.name;
    for (let i = 0; i < 6; i++) tr.appendChild(document.createElement("td"));
    tr.cells[0].textContent = t.name;
    tr.addEventListener("click", () => { reveal("t:" + t.name); select("t:" + t.name); });
    return tr;
  });
  body.replaceChildren(...state.rows);
  const live = new Set(state.ix.kind.keys());
  for (const key of state.history.keys()) if (!live.has(key)) state.history.delete(key);
  names();
  refresh(true);
}

// applyHash reads the page address's choices: #open=all (every namespace
// open), #open=/a,/b, #flat, #leaves, #infra, #nodes.
function applyHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.has("flat")) { state.opt.grouped = false; state.chosen = true; }
  if (h.has("leaves")) { state.opt.hideLeaves = false; state.chosen = true; }
  if (h.has("infra")) { state.opt.hideInfra = false; state.chosen = true; }
  if (h.has("nodes")) state.opt.nodesOnly = true;
  const open = h.get("open");
  if (open === "all") for (const ns of state.ix.spaces.keys()) state.opt.open.add(ns);
  else if (open) for (const ns of open.split(",")) state.opt.open.add(ns);
  $("grouped").checked = state.opt.grouped;
  $("leaves").checked = !state.opt.hideLeaves;
  $("infra").checked = !state.opt.hideInfra;
  $("nodesonly").checked = state.opt.nodesOnly;
}

// applyFilter hides what the filter leaves out: a box stays if anything in it matches.
function applyFilter() {
  const q = filterText();
  const match = (name) => q === "" || name.toLowerCase().includes(q);
  const boxes = new Set();
  if (q !== "" && state.ix) for (const [k, name] of state.ix.name) if (match(name)) { const b = closedBox(k); if (b) boxes.add(b); }
  for (const [k, g] of state.ents) g.classList.toggle("hidden", !(match(g.dataset.name) || boxes.has(k)));
  for (const g of state.edges.values()) g.classList.toggle("hidden", [g.view.from, g.view.to].some((k) => state.ents.get(k)?.classList.contains("hidden")));
  if (state.shape) state.shape.topics.forEach((t, i) => {
    state.rows[i].hidden = !match(t.name) || (!state.opt.builtins && PulseView.BUILTIN.has(t.name));
  });
}

// How bad an edge's state is: an aggregated edge shows its worst member's.
const SEVERITY = { exited: 6, starved: 6, unmatched: 6, stalled: 5, warn: 4, not_measured: 3, both: 2, inter: 2, intra: 2, none: 1 };

// edgeText is an edge's label on the picture: its rate, or what is wrong;
// the full label (pulse graph's) is its tooltip and in the detail.
function edgeText(hz, cls, e) {
  const words = { exited: "exited", starved: "starved", unmatched: "unmatched", not_measured: "not measured" };
  let t = words[cls] || (e.kind === "calls" ? rate(hz) + " req/s" : rate(hz) + (e.members.length > 1 ? " msg/s" : " Hz") + (cls === "intra" ? " intra" : ""));
  if (e.kind === "topic") t = (e.topics.length > 1 ? `${e.topics[0]} +${e.topics.length - 1}` : e.topics[0]) + "\n" + t;
  return t;
}

function render(f) {
  const s = state.shape;
  if (!s || f.seq !== s.seq || !state.view) return; // values of a shape not drawn yet
  const t0 = performance.now();
  state.frame = f;
  const procs = new Map(f.procs.map((p) => [p.pid, p]));
  const where = state.view.where;
  s.nodes.forEach((n, i) => {
    const key = state.ix.keys.get(n.id), ge = state.ents.get(key);
    if (!ge || where.get(key) !== key) return;
    const v = f.nodes[i], p = procs.get(n.pid);
    let sub = "pid " + n.pid + (v.exited ? " · exited" : "");
    if (!v.exited && p && p.cpu_pct !== undefined) sub += ` · ${fmt(p.cpu_pct, 1)}% · ${fmt(p.rss_mib, 0)} MiB`;
    setText(ge.sub, sub);
    ge.classList.toggle("exited", !!v.exited);
    ge.classList.toggle("saturated", (v.busy_pct || 0) >= 90 || (v.executor_thread_pct || 0) >= 90);
    ge.dataset.state = v.exited ? "exited" : "alive";
  });
  // A namespace box: what its nodes publish a second, and its worst topic.
  const box = new Map();
  const boxOf = (key) => {
    const b = closedBox(key);
    if (b && !box.has(b)) box.set(b, { hz: 0, stall: 0, warn: 0, exited: 0 });
    return b ? box.get(b) : null;
  };
  s.topics.forEach((t, i) => {
    const key = "t:" + t.name, v = f.topics[i], ge = state.ents.get(key);
    remember(key, v.pub_hz !== undefined ? v.pub_hz : v.recv_hz);
    const row = state.rows[i];
    if (!row.hidden) { // a row the filter hides is filled when it shows again
      const c = row.cells;
      setText(c[1], fmt(v.pub_hz, 1)); setText(c[2], fmt(v.recv_hz, 1)); setText(c[3], fmt(v.gap_ms, 0)); setText(c[4], fmt(v.latency_ms, 1));
      if (c[5].textContent !== v.state) { c[5].textContent = v.state; c[5].className = "state-" + v.state; }
    }
    const b = boxOf(key);
    if (b) { b.stall += v.state === "STALL"; b.warn += v.state === "WARN"; }
    if (!ge || where.get(key) !== key) return;
    ge.dataset.state = v.state;
    ge.classList.toggle("warn", v.state === "WARN");
    ge.classList.toggle("stall", v.state === "STALL");
    setText(ge.sub, topicSub(t) + (v.latency_ms !== undefined ? ` · lat p99 ${fmt(v.latency_ms, 1)} ms` : ""));
  });
  s.edges.forEach((e, i) => {
    if (e.kind !== "pub") return;
    const b = boxOf(state.ix.keys.get(e.from));
    if (b) b.hz += f.edge_hz[i] || 0;
  });
  s.nodes.forEach((n, i) => { const b = f.nodes[i].exited && boxOf(state.ix.keys.get(n.id)); if (b) b.exited++; });
  for (const v of state.view.vertices.values()) {
    if (v.kind !== "namespace") continue;
    const ge = state.ents.get(v.key), b = box.get(v.key) || { hz: 0, stall: 0, warn: 0, exited: 0 };
    setText(ge.sub, `${v.counts.nodes} nodes · ${v.counts.topics} topics`);
    const trouble = [b.stall ? b.stall + " STALL" : "", b.warn ? b.warn + " WARN" : "", b.exited ? b.exited + " exited" : ""].filter(Boolean).join(" · ");
    setText(ge.traffic, rate(b.hz) + " msg/s" + (trouble ? " · " + trouble : ""));
    ge.dataset.state = b.stall ? "STALL" : b.warn ? "WARN" : "ok";
    ge.classList.toggle("stall", b.stall > 0);
    ge.classList.toggle("warn", b.warn > 0 && !b.stall);
  }
  const topicIndex = new Map(s.topics.map((t, i) => [t.id, i]));
  for (const ge of state.edges.values()) {
    const e = ge.view;
    let hz = 0, bytes = 0, cls = "none", worst = 0;
    for (const m of e.members) {
      hz += f.edge_hz[m] || 0;
      if (f.edge_bytes) bytes += f.edge_bytes[m] || 0;
      const se = s.edges[m], st = f.edge_state[m];
      // A topic's state colours its edges as top's words do: stalled, or below
      // its spec (a verdict names it); an edge's own fault (exited, starved,
      // unmatched) says more and stays.
      const ti = se.kind === "pub" ? topicIndex.get(se.to) : se.kind === "sub" ? topicIndex.get(se.from) : undefined;
      const topicState = ti !== undefined ? f.topics[ti].state : "";
      const own = st === "exited" || st === "starved" || st === "unmatched";
      const c = own ? st : topicState === "STALL" ? "stalled" : topicState === "WARN" ? "warn" : st;
      if ((SEVERITY[c] || 0) > worst) { worst = SEVERITY[c] || 0; cls = c; }
    }
    ge.setAttribute("class", "edge " + cls + (ge.classList.contains("hidden") ? " hidden" : ""));
    ge.dataset.state = cls;
    ge.dataset.hz = hz.toFixed(3);
    // Width: bytes a second where processes measure them (a camera's 30 Hz
    // outweighs a 100 Hz twist), else messages a second.
    const width = f.edge_bytes ? 1 + Math.log10(1 + bytes / 1000) * 1.2 : 1 + Math.log10(1 + hz) * 1.5;
    ge.children[0].setAttribute("stroke-width", width.toFixed(2));
    ge.dataset.bytes = bytes.toFixed(0);
    let text = edgeText(hz, cls, e);
    if (bytes > 0 && !text.includes("\n")) text += " · " + byteRate(bytes);
    const lat = e.members.length === 1 && f.edge_latency ? f.edge_latency[e.members[0]] : "";
    if (lat && !text.includes("\n")) text += "\n" + lat; // a latency link's hop: the input's age at this publish
    const label = ge.children[1];
    if (label.dataset.text !== text) {
      label.dataset.text = text;
      const [a, b] = text.split("\n");
      if (b === undefined) label.textContent = a;
      else {
        label.replaceChildren(el("tspan", { x: label.getAttribute("x"), dy: 0 }, a), el("tspan", { x: label.getAttribute("x"), dy: 14 }, b));
      }
    }
    setText(ge.children[2], e.members.length === 1 ? f.edge_label[e.members[0]] : `${e.members.length} edges` + (e.topics.length ? ": " + e.topics.join(", ") : ""));
  }
  for (const [k, g] of state.ents) g.classList.toggle("selected", k === state.selected);

  renderWarnings(f);
  renderPaths(f);
  renderDetail();
  const when = new Date(f.ts_ns / 1e6);
  $("status").textContent = `${when.toLocaleTimeString()} · window ${f.window_s.toFixed(2)} s · ${s.nodes.length} nodes, ${s.topics.length} topics`;
  state.frames++;
  state.lastRenderMs = performance.now() - t0;
}

function select(key) {
  state.selected = state.selected === key ? null : key;
  state.detail = null;
  for (const [k, g] of state.ents) g.classList.toggle("selected", k === state.selected);
  $("focus").disabled = !state.selected;
  renderDetail();
}

async function start() {
  vp = PulseDraw.viewport($("graph"), $("viewport"));
  $("filter").addEventListener("input", applyFilter);
  $("search").addEventListener("change", search);
  $("search").addEventListener("keydown", (e) => { if (e.key === "Enter") search(); });
  const toggle = (id, apply) => $(id).addEventListener("change", () => { apply($(id).checked); refresh(false); });
  toggle("builtins", (on) => { state.opt.builtins = on; });
  toggle("grouped", (on) => { state.opt.grouped = on; state.chosen = true; });
  toggle("leaves", (on) => { state.opt.hideLeaves = !on; state.chosen = true; });
  toggle("infra", (on) => { state.opt.hideInfra = !on; state.chosen = true; });
  toggle("nodesonly", (on) => { state.opt.nodesOnly = on; });
  $("focus").addEventListener("click", () => { if (state.selected) focusOn(state.selected); });
  $("hops").addEventListener("change", () => { if (state.opt.focus) focusOn(state.opt.focus.key); });
  $("unfocus").addEventListener("click", unfocus);
  $("fit").addEventListener("click", () => { if (state.lay) vp.fit(bounds(), 0.05); });
  $("zoomin").addEventListener("click", () => vp.zoom(1.25));
  $("zoomout").addEventListener("click", () => vp.zoom(0.8));
  $("tidy").addEventListener("click", () => { state.sig = ""; refresh(false); });
  const info = await (await fetch("api/info")).json();
  if (info.replay) {
    state.replay = true;
    $("replay").hidden = false;
    const slider = $("slider");
    slider.max = Math.max(0, info.count - 1);
    let asked = 0;
    const show = async () => {
      const mine = ++asked;
      const f = await (await fetch("api/frame?i=" + slider.value)).json();
      if (mine !== asked) return; // a later move of the slider owns the page: answers may arrive out of order
      if (!state.shape || state.shape.seq !== f.shape.seq) applyShape(f.shape);
      render(f.now);
      $("slidertext").textContent = `window ${f.now.index + 1} of ${f.now.count}`;
    };
    slider.addEventListener("input", show);
    await show();
    return;
  }
  const es = new EventSource("events");
  es.addEventListener("shape", (m) => applyShape(JSON.parse(m.data)));
  es.onmessage = (m) => render(JSON.parse(m.data));
  es.onerror = () => { $("status").textContent = "disconnected: retrying…"; };
}

document.addEventListener("DOMContentLoaded", start); // after panel.js, the last deferred script
