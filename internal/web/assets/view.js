// view.js: what the page draws of a shape, given the reader's choices (which
// namespaces are open, a focus, nodes only, leaf topics, builtins). Pure:
// it reads the shape and returns vertices and edges, each edge with the
// shape edges it stands for, so draw.js only lays out and draws, and app.js
// sums a window's values over them.
"use strict";

const PulseView = (() => {
  const BUILTIN = new Set(["/rosout", "/parameter_events"]);
  // Topics nearly every node touches: in a picture of a robot they are a
  // fan of edges from everywhere to everywhere (rqt_graph hides tf too).
  const INFRA = new Set(["/tf", "/tf_static", "/diagnostics", "/diagnostics_agg", "/diagnostics_toplevel_state"]);
  // Above this many nodes and topics a graph opens grouped: namespaces closed
  // into boxes and leaf topics hidden, until the reader opens or shows them.
  const LARGE = 80;

  // The namespaces that lead to a name, outermost first: "/a/b/c" -> ["/a", "/a/b"].
  function prefixes(name) {
    const out = [];
    for (let i = name.indexOf("/", 1); i > 0; i = name.indexOf("/", i + 1)) out.push(name.slice(0, i));
    return out;
  }

  // index is what every view of a shape shares: entity keys, the namespace
  // tree (from the nodes' namespaces: a topic belongs to the deepest of them
  // its name starts with), and each topic's publishers and subscribers.
  function index(shape) {
    const ix = { keys: new Map(), kind: new Map(), name: new Map(), chain: new Map(), spaces: new Map(), topicPubs: new Map(), topicSubs: new Map(), services: new Map() };
    const spaces = ix.spaces; // namespace -> {nodes, topics}: what is under it, at any depth
    for (const n of shape.nodes) for (const ns of prefixes(n.name)) if (!spaces.has(ns)) spaces.set(ns, { nodes: 0, topics: 0 });
    const chainOf = (name) => prefixes(name).filter((ns) => spaces.has(ns));
    for (const n of shape.nodes) {
      const k = "n:" + n.name + "@" + n.pid;
      ix.keys.set(n.id, k); ix.kind.set(k, "node"); ix.name.set(k, n.name);
      const c = chainOf(n.name);
      ix.chain.set(k, c);
      for (const ns of c) spaces.get(ns).nodes++;
    }
    for (const t of shape.topics) {
      const k = "t:" + t.name;
      ix.keys.set(t.id, k); ix.kind.set(k, "topic"); ix.name.set(k, t.name);
      const c = chainOf(t.name);
      ix.chain.set(k, c);
      for (const ns of c) spaces.get(ns).topics++;
      ix.topicPubs.set(k, []); ix.topicSubs.set(k, []);
    }
    for (const s of shape.services) {
      const k = "s:" + s.name;
      ix.keys.set(s.id, k); ix.kind.set(k, "service"); ix.name.set(k, s.name);
    }
    shape.edges.forEach((e, i) => {
      const from = ix.keys.get(e.from), to = ix.keys.get(e.to);
      if (e.kind === "pub" && ix.topicPubs.has(to)) ix.topicPubs.get(to).push(i);
      if (e.kind === "sub" && ix.topicSubs.has(from)) ix.topicSubs.get(from).push(i);
      if (e.kind === "serves" || e.kind === "calls") {
        if (!ix.services.has(to)) ix.services.set(to, { servers: [], clients: [] });
        ix.services.get(to)[e.kind === "serves" ? "servers" : "clients"].push(i);
      }
    });
    ix.large = shape.nodes.length + shape.topics.length > LARGE;
    ix.topicOf = new Map(shape.topics.map((t) => ["t:" + t.name, t]));
    return ix;
  }

  // hiddenTopic: a builtin, an action's or a service's own topics (grouped
  // under their node), or a leaf (published and never subscribed, or the other way).
  function hiddenTopic(ix, key, opt) {
    const t = ix.topicOf.get(key);
    if (!opt.builtins && (BUILTIN.has(t.name) || t.action || t.introspects)) return true;
    if (opt.hideInfra && INFRA.has(t.name)) return true;
    return opt.hideLeaves && (ix.topicPubs.get(key).length === 0 || ix.topicSubs.get(key).length === 0);
  }

  // closedSpace is the outermost namespace of key's that is not open: the
  // box key is drawn inside when the view is grouped (undefined: none).
  function closedSpace(ix, opt, key) {
    return (ix.chain.get(key) || []).find((ns) => !opt.open.has(ns));
  }

  // neighbourhood: the entities within hops of key, up and down the data flow
  // (a service is a step between its clients and servers).
  function neighbourhood(shape, ix, key, hops, opt) {
    const adj = new Map();
    // a hidden topic (a builtin, tf, diagnostics) joins everything to everything: never a step
    const through = (k) => ix.kind.get(k) !== "topic" || k === key || !hiddenTopic(ix, k, { ...opt, hideLeaves: false });
    const link = (a, b) => {
      if (!adj.has(a)) adj.set(a, new Set());
      if (!adj.has(b)) adj.set(b, new Set());
      adj.get(a).add(b); adj.get(b).add(a);
    };
    for (const e of shape.edges) {
      const a = ix.keys.get(e.from), b = ix.keys.get(e.to);
      if (through(a) && through(b)) link(a, b);
    }
    const seen = new Set([key]);
    let frontier = [key];
    for (let h = 0; h < hops; h++) {
      const next = [];
      for (const k of frontier) for (const m of adj.get(k) || []) if (!seen.has(m)) { seen.add(m); next.push(m); }
      frontier = next;
    }
    return seen;
  }

  // build returns the view of shape under opt:
  //   opt.open: Set of open namespaces (grouped views); opt.grouped
  //   opt.focus: {key, hops} or null; opt.nodesOnly, opt.hideLeaves, opt.hideInfra, opt.builtins
  // as {vertices: Map key -> {key, kind, label, name, parent, entity}, clusters:
  // Map ns -> {key, label, parent}, edges: [{key, from, to, kind, members, topics}]}.
  function build(shape, ix, opt) {
    const vertices = new Map(), clusters = new Map();
    const focus = opt.focus ? neighbourhood(shape, ix, opt.focus.key, opt.focus.hops, opt) : null;
    const grouped = opt.grouped && !focus;
    const label = (name, parent) => (parent && name.startsWith(parent + "/") ? name.slice(parent.length + 1) : name);
    const addCluster = (ns) => {
      if (clusters.has(ns)) return;
      const parentNs = prefixes(ns).filter((p) => ix.spaces.has(p)).pop() || null;
      clusters.set(ns, { key: "c:" + ns, name: ns, label: label(ns, parentNs), parent: parentNs ? "c:" + parentNs : null });
      if (parentNs) addCluster(parentNs);
    };
    // where: the vertex an entity is drawn as (itself or its closed namespace's box), or null.
    const where = new Map();
    const place = (key) => {
      if (where.has(key)) return where.get(key);
      let v = null;
      const kind = ix.kind.get(key);
      if (kind === "service") v = null; // grouped under its node
      else if (focus && !focus.has(key)) v = null;
      else if (kind === "topic" && (opt.nodesOnly || hiddenTopic(ix, key, opt))) v = null;
      else {
        const chain = grouped ? ix.chain.get(key) : [];
        const closed = grouped ? closedSpace(ix, opt, key) : undefined;
        if (closed) {
          v = "ns:" + closed;
          if (!vertices.has(v)) {
            const parentNs = chain[chain.indexOf(closed) - 1] || null;
            if (parentNs) addCluster(parentNs);
            const counts = ix.spaces.get(closed);
            vertices.set(v, { key: v, kind: "namespace", name: closed, label: label(closed, parentNs), parent: parentNs ? "c:" + parentNs : null, counts });
          }
        } else {
          v = key;
          const parentNs = chain.length ? chain[chain.length - 1] : null;
          if (parentNs) addCluster(parentNs);
          const name = ix.name.get(key);
          vertices.set(v, { key, kind, name, label: label(name, parentNs), parent: parentNs ? "c:" + parentNs : null, entity: true });
        }
      }
      where.set(key, v);
      return v;
    };
    for (const n of shape.nodes) place(ix.keys.get(n.id));
    for (const t of shape.topics) place(ix.keys.get(t.id));

    const edges = new Map();
    const add = (from, to, kind, member, topic) => {
      if (from === null || to === null || from === to) return;
      // Into or out of a closed namespace, publications and subscriptions are one flow.
      if ((kind === "pub" || kind === "sub") && (from.startsWith("ns:") || to.startsWith("ns:"))) kind = "flow";
      const k = from + ">" + to + ">" + kind;
      let e = edges.get(k);
      if (!e) { e = { key: k, from, to, kind, members: [], topics: [] }; edges.set(k, e); }
      e.members.push(member);
      if (topic && !e.topics.includes(topic)) e.topics.push(topic);
    };
    shape.edges.forEach((e, i) => {
      const from = ix.keys.get(e.from), to = ix.keys.get(e.to);
      if (e.kind === "pub" || e.kind === "sub") {
        if (opt.nodesOnly) return; // drawn below, publisher to subscriber
        add(place(from), place(to), e.kind, i);
      }
    });
    if (opt.nodesOnly) {
      // Each subscription edge carries its topic from every publisher's vertex to the subscriber's.
      for (const [topic, subs] of ix.topicSubs) {
        if (hiddenTopic(ix, topic, { ...opt, hideLeaves: false })) continue;
        if (focus && !focus.has(topic)) continue;
        const pubs = ix.topicPubs.get(topic);
        for (const si of subs) {
          const to = place(ix.keys.get(shape.edges[si].to));
          for (const pi of pubs) add(place(ix.keys.get(shape.edges[pi].from)), to, "topic", si, ix.name.get(topic));
        }
      }
    }
    // A client calls its services' servers: one edge client -> server per service.
    for (const [svc, ends] of ix.services) {
      if (focus && !focus.has(svc)) continue;
      for (const ci of ends.clients) {
        const from = place(ix.keys.get(shape.edges[ci].from));
        for (const si of ends.servers) add(from, place(ix.keys.get(shape.edges[si].from)), "calls", ci, ix.name.get(svc));
      }
    }
    // members of an aggregated edge are counted once each
    for (const e of edges.values()) e.members = [...new Set(e.members)];
    return { vertices, clusters, edges: [...edges.values()], where, grouped };
  }

  // signature identifies a view's structure: the same signature needs no new layout.
  function signature(view) {
    const parts = [];
    for (const v of view.vertices.values()) parts.push(v.key + "|" + v.parent);
    for (const e of view.edges) parts.push(e.key);
    return parts.sort().join("\n");
  }

  // servicesOf lists, per node key, the services and actions it serves.
  function servicesOf(shape, ix) {
    const out = new Map();
    const kinds = new Map(shape.services.map((s) => ["s:" + s.name, s.kind]));
    for (const [svc, ends] of ix.services) {
      for (const si of ends.servers) {
        const node = ix.keys.get(shape.edges[si].from);
        if (!out.has(node)) out.set(node, { services: 0, actions: 0 });
        out.get(node)[kinds.get(svc) === "action" ? "actions" : "services"]++;
      }
    }
    return out;
  }

  return { build, index, prefixes, signature, servicesOf, closedSpace, BUILTIN, INFRA };
})();
