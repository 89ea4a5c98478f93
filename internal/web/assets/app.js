// pulse web: draws the graph the server sends. A "shape" (entities, edges,
// positions) comes when the topology changes; the values of each window
// follow it, aligned with the shape's lists. Every name comes from a
// segment, so every string goes into the page as a text node (textContent,
// setAttribute of plain values), never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const BUILTIN = new Set(["/rosout", "/parameter_events"]);
const HISTORY = 300; // points per sparkline: five minutes at 1 s windows

const state = {
  shape: null,        // the latest shape
  keys: new Map(),    // graph id -> stable key, for the shape
  nodeEls: [], topicEls: [], serviceEls: [], edgeEls: [], rows: [], // aligned with the shape's lists
  edgeTopic: [],      // per shape edge: the index of its topic, or -1
  frame: null,        // the latest values
  ents: new Map(),    // stable key -> <g>
  edges: new Map(),   // edge key -> <g>
  history: new Map(), // stable key -> {buf: Float32Array(HISTORY), n}: a ring, so the page's memory stays flat
  detail: null,       // the selected entity's detail, as /api/detail answered it
  selected: null,     // stable key
  frames: 0,
};
window.__pulse = state; // read by the browser tests: frames drawn, last render time

const $ = (id) => document.getElementById(id);

function el(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function setText(node, text) { if (node.textContent !== text) node.textContent = text; }

function fmt(v, digits) { return v === undefined || v === null ? "-" : Number(v).toFixed(digits); }

function shown(name) {
  const q = $("filter").value.trim().toLowerCase();
  if (!$("builtins").checked && BUILTIN.has(name)) return false;
  return q === "" || name.toLowerCase().includes(q);
}

function entity(key, kind, label) {
  let g = state.ents.get(key);
  if (!g) {
    g = el("g", { class: "entity " + kind, "data-key": key, "data-kind": kind });
    const w = Math.max(120, Math.min(230, label.length * 6.5 + 20));
    if (kind === "node") g.appendChild(el("ellipse", { cx: w / 2, cy: 16, rx: w / 2, ry: 18 }));
    else if (kind === "topic") g.appendChild(el("rect", { x: 0, y: 0, width: w, height: 32, rx: 3 }));
    else g.appendChild(el("polygon", { points: `10,0 ${w - 10},0 ${w},16 ${w - 10},32 10,32 0,16` }));
    g.appendChild(el("text", { x: w / 2, y: 13, "text-anchor": "middle", class: "name" }, label));
    g.appendChild(el("text", { x: w / 2, y: 27, "text-anchor": "middle", class: "sub" }, ""));
    g.dataset.w = w;
    g.dataset.name = label;
    g.addEventListener("click", () => select(key));
    $("graph").appendChild(g);
    state.ents.set(key, g);
  }
  g.sub = g.sub || g.querySelector("text.sub");
  return g;
}

// topicSub is a topic's second line: what it is part of, or its types.
function topicSub(t) {
  return t.introspects ? "service events of " + t.introspects : t.action ? t.part + " of action " + t.action : (t.types || []).join(", ");
}

// applyShape draws a new shape: entities at their places (kept from before),
// edges between them, the topic table's rows; what is gone is removed.
function applyShape(s) {
  state.shape = s;
  const keys = new Map();
  const seen = new Set();
  let maxX = 0, maxY = 0;
  const place = (id, key, kind, label, name) => {
    keys.set(id, key);
    const ge = entity(key, kind, label);
    const p = s.pos[id] || { x: 0, y: 0 };
    ge.setAttribute("transform", `translate(${p.x},${p.y})`);
    ge.dataset.x = p.x; ge.dataset.y = p.y; ge.dataset.filter = name;
    maxX = Math.max(maxX, p.x + Number(ge.dataset.w)); maxY = Math.max(maxY, p.y + 40);
    seen.add(key);
    return ge;
  };
  state.nodeEls = s.nodes.map((n) => place(n.id, "n:" + n.name + "@" + n.pid, "node", n.name, n.name));
  state.topicEls = s.topics.map((t) => {
    const ge = place(t.id, "t:" + t.name, "topic", t.name, t.name);
    setText(ge.sub, topicSub(t));
    return ge;
  });
  state.serviceEls = s.services.map((v) => place(v.id, "s:" + v.name, "service", (v.kind === "action" ? "action " : "") + v.name, v.name));
  for (const [key, ge] of state.ents) if (!seen.has(key)) { ge.remove(); state.ents.delete(key); }
  state.keys = keys;

  const topicIndex = new Map(s.topics.map((t, i) => [t.id, i]));
  const edgeSeen = new Set();
  state.edgeTopic = [];
  state.edgeEls = s.edges.map((e) => {
    const from = keys.get(e.from), to = keys.get(e.to);
    const key = from + ">" + to + ">" + e.kind;
    let ge = state.edges.get(key);
    if (!ge) {
      ge = el("g", { class: "edge", "data-from": from, "data-to": to, "data-kind": e.kind });
      ge.appendChild(el("path", {}));
      ge.appendChild(el("text", { "text-anchor": "middle" }));
      $("graph").insertBefore(ge, $("graph").firstChild); // under the entities
      state.edges.set(key, ge);
    }
    edgeSeen.add(key);
    ge.path = ge.firstChild; ge.label = ge.lastChild;
    ge.ends = [state.ents.get(from), state.ents.get(to)];
    const [a, b] = ge.ends;
    const x1 = Number(a.dataset.x) + Number(a.dataset.w), y1 = Number(a.dataset.y) + 16;
    const x2 = Number(b.dataset.x), y2 = Number(b.dataset.y) + 16;
    const mx = (x1 + x2) / 2;
    ge.path.setAttribute("d", `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`);
    ge.label.setAttribute("x", mx); ge.label.setAttribute("y", (y1 + y2) / 2 - 4);
    state.edgeTopic.push(e.kind === "pub" ? topicIndex.get(e.to) ?? -1 : e.kind === "sub" ? topicIndex.get(e.from) ?? -1 : -1);
    return ge;
  });
  for (const [key, ge] of state.edges) if (!edgeSeen.has(key)) { ge.remove(); state.edges.delete(key); }
  // The whole graph fits the pane's width (zoomed out when it is wider), so nothing is off screen.
  $("graph").setAttribute("viewBox", `0 0 ${maxX + 60} ${maxY + 40}`);

  const body = $("topics").querySelector("tbody");
  state.rows = s.topics.map((t) => {
    const tr = document.createElement("tr");
    tr.dataset.topic = t.name;
    for (let i = 0; i < 6; i++) tr.appendChild(document.createElement("td"));
    tr.cells[0].textContent = t.name;
    tr.addEventListener("click", () => select("t:" + t.name));
    return tr;
  });
  body.replaceChildren(...state.rows);
  for (const key of state.history.keys()) if (!seen.has(key)) state.history.delete(key);
  applyFilter();
}

// remember appends a rate to an entity's ring of the last HISTORY windows.
function remember(key, v) {
  let h = state.history.get(key);
  if (!h) { h = { buf: new Float32Array(HISTORY), n: 0 }; state.history.set(key, h); }
  h.buf[h.n % HISTORY] = v;
  h.n++;
}

// recent is an entity's remembered rates, oldest first.
function recent(key) {
  const h = state.history.get(key);
  if (!h) return [];
  const out = [];
  for (let i = Math.max(0, h.n - HISTORY); i < h.n; i++) out.push(h.buf[i % HISTORY]);
  return out;
}

// applyFilter hides what the filter and the builtins box leave out.
function applyFilter() {
  for (const ge of state.ents.values()) ge.classList.toggle("hidden", !shown(ge.dataset.filter));
  for (const ge of state.edges.values()) ge.classList.toggle("hidden", ge.ends.some((x) => x.classList.contains("hidden")));
  if (state.shape) state.shape.topics.forEach((t, i) => { state.rows[i].hidden = !shown(t.name); });
}

function render(f) {
  const s = state.shape;
  if (!s || f.seq !== s.seq) return; // values of a shape not drawn yet
  const t0 = performance.now();
  state.frame = f;
  const procs = new Map(f.procs.map((p) => [p.pid, p]));
  s.nodes.forEach((n, i) => {
    const v = f.nodes[i], ge = state.nodeEls[i], p = procs.get(n.pid);
    let sub = "pid " + n.pid + (v.exited ? " · exited" : "");
    if (!v.exited && p && p.cpu_pct !== undefined) sub += ` · ${fmt(p.cpu_pct, 1)}% · ${fmt(p.rss_mib, 0)} MiB`;
    setText(ge.sub, sub);
    ge.classList.toggle("exited", !!v.exited);
    ge.classList.toggle("saturated", (v.busy_pct || 0) >= 90 || (v.executor_thread_pct || 0) >= 90);
    ge.dataset.state = v.exited ? "exited" : "alive";
  });
  s.topics.forEach((t, i) => {
    const v = f.topics[i], ge = state.topicEls[i];
    ge.dataset.state = v.state;
    ge.classList.toggle("warn", v.state === "WARN");
    ge.classList.toggle("stall", v.state === "STALL");
    setText(ge.sub, topicSub(t) + (v.latency_ms !== undefined ? ` · lat p99 ${fmt(v.latency_ms, 1)} ms` : ""));
    remember("t:" + t.name, v.pub_hz !== undefined ? v.pub_hz : v.recv_hz);
    const c = state.rows[i].cells;
    setText(c[1], fmt(v.pub_hz, 1)); setText(c[2], fmt(v.recv_hz, 1)); setText(c[3], fmt(v.gap_ms, 0)); setText(c[4], fmt(v.latency_ms, 1));
    setText(c[5], v.state);
    c[5].className = "state-" + v.state;
  });
  s.services.forEach((v, i) => setText(state.serviceEls[i].sub, f.services[i].hz !== undefined ? fmt(f.services[i].hz, 1) + " req/s" : ""));
  s.edges.forEach((e, i) => {
    const ge = state.edgeEls[i], st = f.edge_state[i];
    const hz = f.edge_hz[i] || 0;
    ge.path.setAttribute("stroke-width", (1 + Math.log10(1 + hz) * 1.5).toFixed(2));
    const ti = state.edgeTopic[i];
    // A topic's state colours its edges as top's words do: stalled, or below
    // its spec (a verdict names it); an edge's own fault (exited, starved,
    // unmatched) says more and stays.
    const topicState = ti >= 0 ? f.topics[ti].state : "";
    const own = st === "exited" || st === "starved" || st === "unmatched";
    const cls = own ? st : topicState === "STALL" ? "stalled" : topicState === "WARN" ? "warn" : st;
    ge.setAttribute("class", "edge " + cls + (ge.classList.contains("hidden") ? " hidden" : ""));
    ge.dataset.state = cls;
    ge.dataset.hz = hz.toFixed(3);
    setText(ge.label, f.edge_label[i]);
  });
  for (const [k, g] of state.ents) g.classList.toggle("selected", k === state.selected);

  renderWarnings(f);
  renderDetail();
  const when = new Date(f.ts_ns / 1e6);
  $("status").textContent = `${when.toLocaleTimeString()} · window ${f.window_s.toFixed(2)} s · ${s.nodes.length} nodes, ${s.topics.length} topics`;
  state.frames++;
  state.lastRenderMs = performance.now() - t0;
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
}

function age(s) {
  if (s < 1) return Math.round(s * 1000) + "ms";
  if (s < 60) return s.toFixed(1) + "s";
  return Math.floor(s / 60) + "m" + String(Math.floor(s % 60)).padStart(2, "0") + "s";
}

function renderWarnings(f) {
  const ul = $("warnings");
  ul.replaceChildren();
  for (const w of f.warnings) {
    const li = document.createElement("li");
    li.textContent = `${age(w.age_s)} ${w.what || w.kind}` + (w.fix ? ` — fix: ${w.fix}` : "");
    ul.appendChild(li);
  }
  if (f.warnings.length === 0) {
    const li = document.createElement("li");
    li.textContent = "none";
    ul.appendChild(li);
  }
}

function select(key) {
  state.selected = state.selected === key ? null : key;
  state.detail = null;
  for (const [k, g] of state.ents) g.classList.toggle("selected", k === state.selected);
  renderDetail();
}

// fetchDetail asks the server for the selected entity's detail in the
// window drawn (one request at a time), then draws it.
async function fetchDetail() {
  const key = state.selected, f = state.frame;
  if (!key || !f || state.fetching) return;
  state.fetching = true;
  try {
    const q = "api/detail?key=" + encodeURIComponent(key) + (state.replay ? "&i=" + f.index : "");
    const r = await fetch(q);
    if (r.ok && state.selected === key) state.detail = await r.json();
  } catch (e) {
    state.detail = null;
  } finally {
    state.fetching = false;
  }
  drawDetail();
}

function renderDetail() {
  $("detail").hidden = !state.selected || !state.frame;
  if (!state.selected || !state.frame) return;
  drawDetail();
  fetchDetail();
}

function spread(s) { return s ? `${fmt(s.mean_ms, 2)} / ${fmt(s.p99_ms, 2)} / ${fmt(s.max_ms, 2)}` : "-"; }

// drawDetail draws the selected entity: each endpoint (from the detail the
// server sent, else from the frame's edges), its gaps, and its sparkline.
function drawDetail() {
  const f = state.frame, s = state.shape, key = state.selected;
  if (!key || !f) return;
  $("detailtitle").textContent = key.slice(2);
  const table = $("detailtable");
  table.replaceChildren();
  const head = document.createElement("tr");
  const d = state.detail && state.detail.key === key ? state.detail : null;
  const cols = d ? ["side", "node / topic", "pid", "Hz", "loss %", "QoS · type", "time ms (mean / p99 / max)", "late ms"] : ["side", "node / topic", "Hz", "QoS", "state"];
  for (const h of cols) { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); }
  table.appendChild(head);
  if (d) {
    for (const e of d.endpoints) {
      const tr = document.createElement("tr");
      cell(tr, e.kind);
      cell(tr, e.other);
      cell(tr, String(e.pid));
      cell(tr, e.hz === undefined ? "not measured" : fmt(e.hz, 1));
      cell(tr, fmt(e.loss_pct, 1));
      cell(tr, [e.qos, e.type].filter(Boolean).join(" · ") || "-");
      cell(tr, e.time ? spread(e.time) : e.why || "-");
      cell(tr, spread(e.late) + (e.open ? ` · ${e.open} open` : "") + (e.failed ? ` · ${e.failed} not sent (client gone)` : ""));
      tr.title = e.exe || "";
      table.appendChild(tr);
    }
  } else {
    s.edges.forEach((e, i) => {
      const from = state.keys.get(e.from), to = state.keys.get(e.to);
      if (from !== key && to !== key) return;
      const tr = document.createElement("tr");
      cell(tr, e.kind);
      cell(tr, (from === key ? to : from).slice(2));
      cell(tr, fmt(f.edge_hz[i], 1));
      cell(tr, [e.qos, e.type].filter(Boolean).join(" · ") || "-");
      cell(tr, (f.edge_state[i] === "exited" ? "exited " : "") + f.edge_label[i]);
      table.appendChild(tr);
    });
  }
  const gaps = [];
  if (d && d.pub_gap) gaps.push("published gaps ms " + spread(d.pub_gap));
  if (d && d.recv_gap) gaps.push("received gaps ms " + spread(d.recv_gap));
  if (d && d.latency) gaps.push("latency ms " + spread(d.latency));
  $("detailgaps").textContent = gaps.length ? gaps.join(" · ") + " (mean / p99 / max)" : "";
  const spark = $("spark");
  spark.replaceChildren();
  const h = recent(key);
  if (h.length > 1) {
    const top = Math.max(...h, 1e-9);
    const pts = h.map((v, i) => `${(i / (HISTORY - 1)) * 300},${38 - (v / top) * 36}`).join(" ");
    spark.appendChild(el("polyline", { points: pts, fill: "none", stroke: "#4a7" }));
    spark.appendChild(el("text", { x: 2, y: 10, "font-size": 10 }, "max " + top.toFixed(1) + " Hz"));
  }
}

async function start() {
  $("filter").addEventListener("input", applyFilter);
  $("builtins").addEventListener("change", applyFilter);
  const info = await (await fetch("api/info")).json();
  if (info.replay) {
    state.replay = true;
    $("replay").hidden = false;
    const slider = $("slider");
    slider.max = Math.max(0, info.count - 1);
    const show = async () => {
      const f = await (await fetch("api/frame?i=" + slider.value)).json();
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

start();
