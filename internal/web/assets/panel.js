// panel.js: the side panel of pulse web: the warnings with their ages, the
// selected entity's detail (asked of the server for the window drawn) and
// its sparkline, from the rates app.js remembers each window. It reads
// app.js's state; the page loads it after app.js's helpers are defined.
"use strict";

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

// renderPaths lists the window's end-to-end paths (issue 47): latency at
// p50 and p99, the bound, and which hop is not measured; hidden without any.
function renderPaths(f) {
  const paths = f.paths || [];
  $("pathsection").hidden = paths.length === 0;
  const body = $("paths").tBodies[0];
  body.replaceChildren();
  for (const p of paths) {
    const tr = document.createElement("tr");
    const ms = (v) => (v === undefined ? "-" : fmt(v, 1));
    cell(tr, p.name);
    cell(tr, ms(p.p50_ms));
    cell(tr, ms(p.p99_ms));
    cell(tr, p.bound_ms ? fmt(p.bound_ms, 0) : "-");
    cell(tr, p.missing ? "no link: " + p.missing : p.slow ? "SLOW" : "ok", p.slow || p.missing ? "warn" : "");
    tr.title = p.topics.join(" → ");
    body.appendChild(tr);
  }
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
// bytesText is an endpoint's bytes: "~27.6 MB/s · 921 kB" (~: sampled sizes), "not measured", or "-".
function bytesText(e) {
  if (e.bytes_per_s === undefined) return e.bytes_how === "none" ? "not measured" : "-";
  const approx = e.bytes_how === "sampled" ? "~" : "";
  return approx + byteRate(e.bytes_per_s) + " · " + byteRate(e.mean_bytes).replace("/s", "");
}

function drawDetail() {
  const f = state.frame, s = state.shape, key = state.selected;
  if (!key || !f) return;
  $("detailtitle").textContent = key.slice(2);
  const table = $("detailtable");
  table.replaceChildren();
  const head = document.createElement("tr");
  const d = state.detail && state.detail.key === key ? state.detail : null;
  const cols = d ? ["side", "node / topic", "pid", "Hz", "loss %", "QoS · type", "time ms (mean / p99 / max)", "late ms"] : ["side", "node / topic", "Hz", "QoS", "state"];
  const withBytes = d && d.endpoints.some((e) => e.bytes_how);
  if (withBytes) cols.push("bytes/s · mean size");
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
      if (withBytes) cell(tr, bytesText(e));
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

