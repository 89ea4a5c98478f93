// pulse web: draws the frames the server sends (one per window). Every name
// comes from a segment, so every string goes into the page as a text node
// (textContent, setAttribute of plain values), never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const BUILTIN = new Set(["/rosout", "/parameter_events"]);
const HISTORY = 300; // points per sparkline: five minutes at 1 s windows

const state = {
  frame: null,
  pos: {},            // graph id -> {x, y}: sent when the topology changes
  ents: new Map(),    // stable key -> <g>
  edges: new Map(),   // edge key -> <g>
  history: new Map(), // stable key -> [rate, ...]
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

function keyOf(g, id) {
  for (const n of g.nodes) if (n.id === id) return "n:" + n.name + "@" + n.pid;
  for (const t of g.topics) if (t.id === id) return "t:" + t.name;
  for (const s of g.services) if (s.id === id) return "s:" + s.name;
  return "";
}

function fmt(v, digits) { return v === undefined || v === null ? "-" : Number(v).toFixed(digits); }

function edgeHz(e) { return (e.inter_hz || 0) + (e.intra_hz || 0); }

function shown(name) {
  const q = $("filter").value.trim().toLowerCase();
  if (!$("builtins").checked && BUILTIN.has(name)) return false;
  return q === "" || name.toLowerCase().includes(q);
}

function entity(key, kind, label, sub) {
  let g = state.ents.get(key);
  if (!g) {
    g = el("g", { class: "entity " + kind, "data-key": key, "data-kind": kind });
    const w = Math.max(120, Math.min(230, label.length * 6.5 + 20));
    if (kind === "node") g.appendChild(el("ellipse", { cx: w / 2, cy: 16, rx: w / 2, ry: 18 }));
    else if (kind === "topic") g.appendChild(el("rect", { x: 0, y: 0, width: w, height: 32, rx: 3 }));
    else g.appendChild(el("polygon", { points: `10,0 ${w - 10},0 ${w},16 ${w - 10},32 10,32 0,16` }));
    g.appendChild(el("text", { x: w / 2, y: sub ? 13 : 20, "text-anchor": "middle", class: "name" }, label));
    g.appendChild(el("text", { x: w / 2, y: 27, "text-anchor": "middle", class: "sub" }, sub || ""));
    g.dataset.w = w;
    g.addEventListener("click", () => select(key));
    $("graph").appendChild(g);
    state.ents.set(key, g);
  }
  g.querySelector("text.name").textContent = label;
  g.querySelector("text.sub").textContent = sub || "";
  return g;
}

function render(f) {
  const t0 = performance.now();
  if (f.pos) state.pos = f.pos;
  state.frame = f;
  const g = f.graph;
  const seen = new Set();
  const topicState = new Map(f.topics.map((t) => [t.name, t.state]));
  const procs = new Map(f.procs.map((p) => [p.pid, p]));
  let maxX = 0, maxY = 0;
  const place = (ge, id, key, name) => {
    const p = state.pos[id] || { x: 0, y: 0 };
    ge.setAttribute("transform", `translate(${p.x},${p.y})`);
    ge.dataset.x = p.x; ge.dataset.y = p.y;
    ge.classList.toggle("hidden", !shown(name));
    ge.classList.toggle("selected", key === state.selected);
    maxX = Math.max(maxX, p.x + Number(ge.dataset.w)); maxY = Math.max(maxY, p.y + 40);
    seen.add(key);
  };
  for (const n of g.nodes) {
    const key = "n:" + n.name + "@" + n.pid;
    const p = procs.get(n.pid);
    let sub = "pid " + n.pid + (n.alive ? "" : " · exited");
    if (n.alive && p && p.cpu_pct !== undefined) sub += ` · ${fmt(p.cpu_pct, 1)}% · ${fmt(p.rss_mib, 0)} MiB`;
    const ge = entity(key, "node", n.name, sub);
    ge.classList.toggle("exited", !n.alive);
    ge.classList.toggle("saturated", (n.busy_pct || 0) >= 90 || (n.executor_thread_pct || 0) >= 90);
    ge.dataset.state = n.alive ? "alive" : "exited";
    place(ge, n.id, key, n.name);
  }
  for (const t of g.topics) {
    const key = "t:" + t.name;
    let sub = t.introspects ? "service events of " + t.introspects : t.action ? t.part + " of action " + t.action : (t.types || []).join(", ");
    const ge = entity(key, "topic", t.name, sub);
    ge.dataset.state = topicState.get(t.name) || "-";
    place(ge, t.id, key, t.name);
    const h = state.history.get(key) || [];
    h.push(t.pub_hz !== undefined ? t.pub_hz : t.recv_hz);
    if (h.length > HISTORY) h.shift();
    state.history.set(key, h);
  }
  for (const s of g.services) {
    const key = "s:" + s.name;
    const ge = entity(key, "service", (s.kind === "action" ? "action " : "") + s.name, s.hz !== undefined ? fmt(s.hz, 1) + " req/s" : "");
    place(ge, s.id, key, s.name);
  }
  for (const [key, ge] of state.ents) if (!seen.has(key)) { ge.remove(); state.ents.delete(key); }

  const edgeSeen = new Set();
  g.edges.forEach((e, i) => {
    const from = keyOf(g, e.from), to = keyOf(g, e.to);
    const key = from + ">" + to + ">" + e.kind;
    let ge = state.edges.get(key);
    if (!ge) {
      ge = el("g", { class: "edge", "data-from": from, "data-to": to, "data-kind": e.kind });
      ge.appendChild(el("path", {}));
      ge.appendChild(el("text", {}));
      $("graph").insertBefore(ge, $("graph").firstChild); // under the entities
      state.edges.set(key, ge);
    }
    edgeSeen.add(key);
    const a = state.ents.get(from), b = state.ents.get(to);
    if (!a || !b) return;
    const x1 = Number(a.dataset.x) + Number(a.dataset.w), y1 = Number(a.dataset.y) + 16;
    const x2 = Number(b.dataset.x), y2 = Number(b.dataset.y) + 16;
    const mx = (x1 + x2) / 2;
    const hz = edgeHz(e);
    const path = ge.querySelector("path");
    path.setAttribute("d", `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`);
    path.setAttribute("stroke-width", (1 + Math.log10(1 + hz) * 1.5).toFixed(2));
    const topic = e.kind === "pub" ? to : e.kind === "sub" ? from : "";
    const stalled = topic && (state.ents.get(topic)?.dataset.state === "STALL");
    const cls = !e.alive ? "exited" : stalled ? "stalled" : e.transport;
    ge.setAttribute("class", "edge " + cls);
    ge.dataset.state = cls;
    ge.dataset.hz = hz.toFixed(3);
    const label = ge.querySelector("text");
    label.textContent = f.labels[i] || "";
    label.setAttribute("x", mx); label.setAttribute("y", (y1 + y2) / 2 - 4);
    label.setAttribute("text-anchor", "middle");
    ge.classList.toggle("hidden", (a.classList.contains("hidden") || b.classList.contains("hidden")));
  });
  for (const [key, ge] of state.edges) if (!edgeSeen.has(key)) { ge.remove(); state.edges.delete(key); }
  // The whole graph fits the pane's width (zoomed out when it is wider), so nothing is off screen.
  $("graph").setAttribute("viewBox", `0 0 ${maxX + 60} ${maxY + 40}`);

  renderTopics(f);
  renderWarnings(f);
  renderDetail();
  const when = new Date(f.ts_ns / 1e6);
  $("status").textContent = `${when.toLocaleTimeString()} · window ${f.window_s.toFixed(2)} s · ${g.nodes.length} nodes, ${g.topics.length} topics`;
  state.frames++;
  state.lastRenderMs = performance.now() - t0;
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
}

function renderTopics(f) {
  const body = $("topics").querySelector("tbody");
  body.replaceChildren();
  for (const t of f.topics) {
    if (!shown(t.name)) continue;
    const tr = document.createElement("tr");
    tr.dataset.topic = t.name;
    cell(tr, t.name);
    cell(tr, fmt(t.pub_hz, 1));
    cell(tr, fmt(t.recv_hz, 1));
    cell(tr, fmt(t.gap_ms, 0));
    cell(tr, t.state, "state-" + t.state);
    tr.addEventListener("click", () => select("t:" + t.name));
    body.appendChild(tr);
  }
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
    li.textContent = `${age(w.age_s)} ${w.what || w.kind}`;
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
  for (const [k, g] of state.ents) g.classList.toggle("selected", k === state.selected);
  renderDetail();
}

function renderDetail() {
  const f = state.frame;
  const key = state.selected;
  $("detail").hidden = !key || !f;
  if (!key || !f) return;
  const g = f.graph;
  $("detailtitle").textContent = key.slice(2);
  const table = $("detailtable");
  table.replaceChildren();
  const head = document.createElement("tr");
  for (const h of ["side", "node / topic", "Hz", "QoS", "state"]) { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); }
  table.appendChild(head);
  g.edges.forEach((e, i) => {
    const from = keyOf(g, e.from), to = keyOf(g, e.to);
    if (from !== key && to !== key) return;
    const other = from === key ? to : from;
    const tr = document.createElement("tr");
    cell(tr, e.kind);
    cell(tr, other.slice(2));
    cell(tr, fmt(edgeHz(e), 1));
    cell(tr, [e.qos, e.type].filter(Boolean).join(" · ") || "-");
    cell(tr, (e.alive ? "" : "exited ") + (f.labels[i] || ""));
    table.appendChild(tr);
  });
  const spark = $("spark");
  spark.replaceChildren();
  const h = state.history.get(key) || [];
  if (h.length > 1) {
    const top = Math.max(...h, 1e-9);
    const pts = h.map((v, i) => `${(i / (HISTORY - 1)) * 300},${38 - (v / top) * 36}`).join(" ");
    spark.appendChild(el("polyline", { points: pts, fill: "none", stroke: "#4a7" }));
    spark.appendChild(el("text", { x: 2, y: 10, "font-size": 10 }, "max " + top.toFixed(1) + " Hz"));
  }
}

async function start() {
  $("filter").addEventListener("input", () => state.frame && render(state.frame));
  $("builtins").addEventListener("change", () => state.frame && render(state.frame));
  const info = await (await fetch("api/info")).json();
  if (info.replay) {
    $("replay").hidden = false;
    const slider = $("slider");
    slider.max = Math.max(0, info.count - 1);
    const show = async () => {
      const f = await (await fetch("api/frame?i=" + slider.value)).json();
      render(f);
      $("slidertext").textContent = `window ${f.index + 1} of ${f.count}`;
    };
    slider.addEventListener("input", show);
    await show();
    return;
  }
  const es = new EventSource("events");
  es.addEventListener("layout", (m) => { state.pos = JSON.parse(m.data).pos; });
  es.onmessage = (m) => render(JSON.parse(m.data));
  es.onerror = () => { $("status").textContent = "disconnected: retrying…"; };
}

start();
