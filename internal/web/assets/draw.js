// draw.js: lays out a view (view.js) with dagre, a layered left-to-right
// layout with namespaces as nested clusters, and moves the picture under
// the reader's wheel and drag. Places are kept: a layout is made only when
// what is drawn changes, and vertices that arrive with the stream are put
// beside what they connect to without moving anything (design note 0030).
"use strict";

const PulseDraw = (() => {
  const FONT = "12px system-ui, sans-serif", SMALL = FONT;
  const ctx = document.createElement("canvas").getContext("2d");
  const widths = new Map();
  function textWidth(text, font) {
    const k = font + "\u0000" + text;
    let w = widths.get(k);
    if (w === undefined) {
      ctx.font = font;
      w = ctx.measureText(text).width;
      if (widths.size > 20000) widths.clear();
      widths.set(k, w);
    }
    return w;
  }

  const PAD = 12, LINE = 15;
  // A vertex: its name on the first line, what it is doing under it
  // (a topic's type, a node's process, a namespace's counts and traffic).
  function vertexSize(v, subSample) {
    const lines = v.kind === "namespace" ? 3 : v.kind === "node" && v.servicesLine ? 3 : 2;
    const w = Math.max(textWidth(v.label, "bold " + FONT), textWidth(subSample || "", SMALL), v.kind === "namespace" ? 150 : 120);
    return { width: Math.ceil(w + 2 * PAD), height: lines * LINE + 10 };
  }

  // An edge's label: its rate (and, nodes only, its topics), sized for the
  // widest rate it will show, so dagre keeps room for it.
  const RATE_SAMPLE = "8888.8 Hz intra";
  function edgeLabelSize(e) {
    const text = e.topics.length && e.kind === "topic" ? e.topics[0] + (e.topics.length > 1 ? ` +${e.topics.length - 1}` : "") : "";
    const w = Math.max(textWidth(RATE_SAMPLE, SMALL), textWidth(text, SMALL));
    return { width: Math.ceil(w + 6), height: text ? 2 * LINE : LINE };
  }

  // layout places every vertex, cluster and edge label of a view from scratch.
  function layout(view, sizes) {
    const g = new dagre.graphlib.Graph({ compound: true, multigraph: true });
    g.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 40, edgesep: 12, marginx: 24, marginy: 40 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const c of view.clusters.values()) g.setNode(c.key, {});
    for (const c of view.clusters.values()) if (c.parent) g.setParent(c.key, c.parent);
    for (const v of view.vertices.values()) {
      g.setNode(v.key, { ...sizes.get(v.key) });
      if (v.parent) g.setParent(v.key, v.parent);
    }
    for (const e of view.edges) {
      const s = edgeLabelSize(e);
      g.setEdge(e.from, e.to, { width: s.width, height: s.height, labelpos: "c" }, e.key);
    }
    dagre.layout(g);
    const out = { vertices: new Map(), clusters: new Map(), edges: new Map() };
    for (const v of view.vertices.values()) {
      const n = g.node(v.key);
      out.vertices.set(v.key, { x: n.x - n.width / 2, y: n.y - n.height / 2, w: n.width, h: n.height });
    }
    for (const c of view.clusters.values()) {
      const n = g.node(c.key);
      if (n && n.width) out.clusters.set(c.key, { x: n.x - n.width / 2, y: n.y - n.height / 2, w: n.width, h: n.height });
    }
    for (const e of view.edges) {
      const d = g.edge(e.from, e.to, e.key);
      if (d) out.edges.set(e.key, { points: d.points, lx: d.x, ly: d.y });
    }
    return out;
  }

  // extend keeps every place of prev and puts what is new below the picture,
  // each beside what feeds it (or what it feeds), so nothing drawn moves.
  function extend(view, sizes, prev) {
    const out = { vertices: new Map(), clusters: prev.clusters, edges: new Map() };
    let bottom = 0;
    for (const [k, p] of prev.vertices) if (view.vertices.has(k)) { out.vertices.set(k, p); bottom = Math.max(bottom, p.y + p.h); }
    for (const c of prev.clusters.values()) bottom = Math.max(bottom, c.y + c.h);
    const placed = [...out.vertices.values()];
    for (const v of view.vertices.values()) {
      if (out.vertices.has(v.key)) continue;
      const s = sizes.get(v.key);
      let x = 24;
      for (const e of view.edges) {
        const from = e.to === v.key && out.vertices.get(e.from), to = e.from === v.key && out.vertices.get(e.to);
        if (from) { x = from.x + from.w + 80; break; }
        if (to) { x = Math.max(24, to.x - s.width - 80); break; }
      }
      let y = bottom + 40;
      for (const p of placed) if (p.x < x + s.width && x < p.x + p.w && p.y + p.h + 26 > y && p.y < y + s.height + 26) y = p.y + p.h + 26;
      const p = { x, y, w: s.width, h: s.height };
      out.vertices.set(v.key, p);
      placed.push(p);
    }
    for (const e of view.edges) {
      const old = prev.edges.get(e.key);
      if (old && prev.vertices.has(e.from) && prev.vertices.has(e.to)) out.edges.set(e.key, old);
    }
    return out;
  }

  // edgePath: through dagre's points where it routed the edge, else a curve
  // from the right of its source to the left of its target; and where its label goes.
  function edgePath(e, lay) {
    const r = lay.edges.get(e.key);
    if (r) {
      const p = r.points;
      let d = `M${p[0].x},${p[0].y}`;
      for (let i = 1; i < p.length - 1; i++) {
        const mx = (p[i].x + p[i + 1].x) / 2, my = (p[i].y + p[i + 1].y) / 2;
        d += ` Q${p[i].x},${p[i].y} ${i === p.length - 2 ? p[i + 1].x : mx},${i === p.length - 2 ? p[i + 1].y : my}`;
      }
      if (p.length === 2) d += ` L${p[1].x},${p[1].y}`;
      return { d, lx: r.lx, ly: r.ly };
    }
    const a = lay.vertices.get(e.from), b = lay.vertices.get(e.to);
    const x1 = a.x + a.w, y1 = a.y + a.h / 2, x2 = b.x, y2 = b.y + b.h / 2, mx = (x1 + x2) / 2;
    return { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, lx: mx, ly: (y1 + y2) / 2 - 6 };
  }

  // viewport: pan (drag the background) and zoom (wheel, about the pointer) of a <g> in an <svg>.
  function viewport(svg, g) {
    const vp = { x: 0, y: 0, s: 1 };
    const apply = () => g.setAttribute("transform", `translate(${vp.x.toFixed(1)},${vp.y.toFixed(1)}) scale(${vp.s.toFixed(4)})`);
    const zoomAt = (px, py, f) => {
      const s = Math.min(4, Math.max(0.05, vp.s * f));
      vp.x = px - ((px - vp.x) * s) / vp.s;
      vp.y = py - ((py - vp.y) * s) / vp.s;
      vp.s = s;
      apply();
    };
    svg.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = svg.getBoundingClientRect();
      zoomAt(ev.clientX - r.left, ev.clientY - r.top, Math.exp(-ev.deltaY * 0.0015));
    }, { passive: false });
    let drag = null;
    svg.addEventListener("pointerdown", (ev) => {
      if (ev.target.closest && ev.target.closest("g.entity")) return;
      drag = { x: ev.clientX - vp.x, y: ev.clientY - vp.y };
      svg.setPointerCapture(ev.pointerId);
      svg.classList.add("panning");
    });
    svg.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      vp.x = ev.clientX - drag.x; vp.y = ev.clientY - drag.y;
      apply();
    });
    const end = () => { drag = null; svg.classList.remove("panning"); };
    svg.addEventListener("pointerup", end);
    svg.addEventListener("pointercancel", end);
    return {
      state: vp,
      zoom(f) { const r = svg.getBoundingClientRect(); zoomAt(r.width / 2, r.height / 2, f); },
      // fit shows the box [x, y, w, h]: whole when minScale allows, else from its top left.
      fit(box, minScale) {
        const r = svg.getBoundingClientRect();
        const s = Math.min(1.2, (r.width - 20) / Math.max(1, box.w), (r.height - 20) / Math.max(1, box.h));
        vp.s = Math.max(minScale || 0.05, s);
        const cw = box.w * vp.s, ch = box.h * vp.s;
        vp.x = cw < r.width ? (r.width - cw) / 2 - box.x * vp.s : 10 - box.x * vp.s;
        vp.y = ch < r.height ? (r.height - ch) / 2 - box.y * vp.s : 10 - box.y * vp.s;
        apply();
      },
      // center puts a point in the middle of the pane, at a scale no smaller than minScale.
      center(x, y, minScale) {
        const r = svg.getBoundingClientRect();
        vp.s = Math.max(vp.s, minScale || 0);
        vp.x = r.width / 2 - x * vp.s;
        vp.y = r.height / 2 - y * vp.s;
        apply();
      },
    };
  }

  return { layout, extend, edgePath, vertexSize, viewport, textWidth, FONT, SMALL };
})();
