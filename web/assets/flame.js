// The flame graph: exact time by chain of calls, drawn on a canvas.
"use strict";

ct.views = ct.views || {};

// flameFromTree turns a flame graph as the server builds it (flat, in
// pre-order: names, parent, name, value_ns, calls, base_ns, gone, errors,
// error_calls) into the boxes the view draws: {name, value, base, calls,
// failed, of, kids, parent}, where failed of the of calls the box stands
// for returned an error.
ct.flameFromTree = function (t) {
  const n = t.parent.length, diff = !!t.base_ns, errs = t.errors || null;
  // The inverted graph counts a box's calls only at its root: the
  // server counts them along the chain for the share that failed.
  const of = t.error_calls || t.calls;
  const nodes = new Array(n);
  for (let i = 0; i < n; i++) {
    const p = t.parent[i] < 0 ? null : nodes[t.parent[i]];
    const f = { name: p ? t.names[t.name[i]] : "all", value: t.value_ns[i], base: diff ? t.base_ns[i] : 0, calls: t.calls[i],
      failed: errs ? errs[i] : 0, of: errs ? of[i] : 0, kids: [], parent: p };
    if (p) p.kids.push(f);
    nodes[i] = f;
  }
  const root = nodes[0];
  // What vanished since the base trace: boxes of no value, only base.
  for (const g of (diff && t.gone) || []) {
    let p = root;
    g.path.forEach((nm, k) => {
      let c = p.kids.find((x) => x.name === nm);
      if (!c) {
        c = { name: nm, value: 0, base: 0, calls: 0, failed: 0, of: 0, kids: [], parent: p };
        p.kids.push(c);
        p.kids.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      }
      if (k === g.path.length - 1) c.base += g.value_ns;
      p = c;
    });
  }
  root.diff = diff;
  root.errors = !!errs;
  return root;
};

// flameGraph returns the graph of a mode and weight, of the calls of the
// requests sel selects if given: fetched from the server once each, or,
// on the page calltrail flame writes, embedded in it.
ct.flameGraph = async function (mode, weight, sel) {
  ct.flames = ct.flames || {};
  const s = ct.selKey(sel), key = mode + "/" + weight + (s ? "?" + s : "");
  if (!ct.flames[key]) ct.flames[key] = ct.flameFromTree(await ct.api("flame", Object.assign({ mode, weight }, sel)));
  return ct.flames[key];
};

ct.views.flame = async function (root, params) {
  // Some requests' calls have an overview of their own: their errors,
  // and no base trace to compare with.
  const sel = ct.selection(params);
  const o = ct.selKey(sel) ? await ct.api("overview", sel) : ct.overview;
  const st = {
    mode: params.get("mode") === "self" ? "self" : "total",
    weight: ["cpu", "wait"].includes(params.get("weight")) ? params.get("weight") : "wall",
    icicle: params.get("icicle") === "1",
    errors: params.get("errors") === "1",
    q: params.get("q") || "",
    zoom: params.get("zoom") || "",
  };
  const save = () => ct.replaceURL("flame", Object.assign({
    mode: st.mode === "self" ? "self" : "", weight: st.weight === "wall" ? "" : st.weight,
    icicle: st.icicle ? "1" : "", errors: st.errors ? "1" : "", q: st.q, zoom: st.zoom,
  }, sel));

  const canvas = ct.el("canvas", { id: "flame-canvas" });
  const status = ct.el("span", { id: "flame-status", class: "muted" });
  const match = ct.el("span", { id: "flame-match" });
  const details = ct.el("div", { class: "details", id: "flame-details" }, ct.el("span", { class: "muted" }, "Click a box to zoom in and see its chains."));
  const radio = (nm, val, label) => ct.el("label", {}, ct.el("input", { type: "radio", name: nm, value: val, checked: st[nm] === val, onchange: () => { st[nm] = val; st.zoom = ""; rebuild(); } }), " " + label);
  const legend = ct.el("p", { class: "legend", id: "flame-legend" });
  const search = ct.el("input", { id: "flame-search", type: "search", placeholder: "Search (regexp)", value: st.q });
  search.addEventListener("input", () => { st.q = search.value; save(); draw(); });
  // Time off CPU is wall time less CPU time: both need the CPU profile.
  // A link asking for them on a trace without one draws wall time.
  const split = o.weights || (o.has_cpu ? ["cpu", "wait"] : []);
  if (!split.includes(st.weight)) st.weight = "wall";
  const weights = [radio("weight", "wall", "wall time")];
  if (split.includes("cpu")) weights.push(radio("weight", "cpu", "on CPU"));
  if (split.includes("wait")) weights.push(radio("weight", "wait", "waiting"));
  if (o.thin_cpu) weights.push(ct.el("span", { id: "flame-thin", class: "muted" }, " (too few CPU samples to split time on and off CPU)"));
  ct.show(root, ct.standalone ? null : ct.selBanner(sel, "flame", params),
    ct.el("div", { class: "toolbar" },
      ct.el("span", {}, radio("mode", "total", "total"), " ", radio("mode", "self", "self (inverted)")),
      ct.el("span", {}, weights),
      ct.el("label", {}, ct.el("input", { type: "checkbox", id: "flame-icicle", checked: st.icicle, onchange: (e) => { st.icicle = e.target.checked; save(); draw(); } }), " icicle"),
      o.errors > 0 ? ct.el("label", { title: "colour each box by the share of its calls that returned an error" },
        ct.el("input", { type: "checkbox", id: "flame-errors", checked: st.errors, onchange: (e) => { st.errors = e.target.checked; save(); draw(); } }), " colour by errors") : null,
      ct.el("button", { id: "flame-reset", onclick: () => { st.zoom = ""; save(); draw(); } }, "Reset zoom"),
      search, match),
    legend, canvas, status, details);

  let tree, rects = [];
  // At most maxLevels rows are drawn: a canvas is at most 32,767 pixels
  // high. Zooming in shows what lies deeper.
  const rowH = 18, maxLevels = 1500;
  const rebuild = async () => { tree = await ct.flameGraph(st.mode, st.weight, sel); save(); draw(); };
  const zoomNode = () => {
    let f = tree;
    for (const nm of st.zoom ? st.zoom.split("\n") : []) {
      const c = f.kids.find((k) => k.name === nm);
      if (!c) break;
      f = c;
    }
    return f;
  };
  const pathOf = (f) => { const p = []; for (; f.parent; f = f.parent) p.unshift(f.name); return p; };
  const matcher = () => {
    if (!st.q) return null;
    try { return new RegExp(st.q); } catch (e) { return { test: (s) => s.includes(st.q) }; }
  };

  function draw() {
    const t0 = performance.now();
    const z = zoomNode();
    const re = matcher();
    const W = canvas.clientWidth || 1200;
    const anc = [];
    for (let f = z; f; f = f.parent) anc.unshift(f);
    // Levels below the zoomed box that are wide enough to draw.
    let levels = 0;
    const scale = z.value > 0 ? W / z.value : 0;
    for (const stack = [[z, 0]]; stack.length;) {
      const [f, l] = stack.pop();
      levels = Math.max(levels, l);
      if (anc.length + l < maxLevels) for (const c of f.kids) if (c.value * scale >= 0.5) stack.push([c, l + 1]);
    }
    const rowsN = Math.min(anc.length + levels, maxLevels);
    const H = Math.max(rowsN * rowH, 100);
    const g = ct.paint(canvas, W, H, "12px system-ui, sans-serif");
    rects = [];
    const y = (level) => (st.icicle ? level * rowH : H - (level + 1) * rowH);
    const all = tree.diff ? Math.max(tree.value, tree.base) : 0;
    const byErrors = st.errors && tree.errors;
    const fill = (f) => {
      if (re && re.test(f.name)) return "#b12cd6";
      if (byErrors && f.parent) return ct.errorColour(f.failed, f.of);
      if (tree.diff && f.parent) return ct.diffColour(f.value, f.base, all);
      return f.parent ? ct.colour(f.name) : "#d9d9d9";
    };
    legend.textContent = byErrors
      ? "Coloured by the share of each box's calls that returned an error: grey none, pale red a few, deep red all."
      : o.base ? `Compared with ${ct.baseName(o.base)}: red boxes took longer than in the base trace, blue ones less; grey unchanged.` : "";
    legend.hidden = !legend.textContent;
    const box = (f, x, w, level) => {
      const yy = y(level);
      g.fillStyle = fill(f);
      g.fillRect(x, yy, Math.max(w - 0.5, 0.5), rowH - 1);
      const label = ct.fitText(g, f.name, w - 6);
      if (label) {
        g.fillStyle = "#111";
        g.fillText(label, x + 3, yy + rowH / 2);
      }
      rects.push({ f, x, w, y: yy });
    };
    anc.forEach((f, i) => box(f, 0, W, i));
    for (const stack = [[z, 0, anc.length]]; stack.length;) {
      let [f, x, level] = stack.pop();
      if (level >= maxLevels) continue;
      for (const c of f.kids) {
        const w = c.value * scale;
        if (w >= 0.5) {
          box(c, x, w, level);
          stack.push([c, x, level + 1]);
        }
        x += w;
      }
    }
    // The share of time in matched functions, not counted twice where
    // they nest.
    if (re) {
      let sum = 0;
      const walk = (top) => {
        for (const stack = [top]; stack.length;) {
          const f = stack.pop();
          if (f.parent && re.test(f.name)) sum += f.value;
          else for (const c of f.kids) stack.push(c);
        }
      };
      walk(tree);
      match.textContent = `matched ${ct.pct(sum, tree.value)} of all time (${ct.dur(sum)})`;
    } else {
      match.textContent = "";
    }
    canvas.dataset.boxes = rects.length;
    canvas.dataset.failedBoxes = byErrors ? rects.filter((b) => b.f.failed > 0).length : 0;
    // Where a function's widest box is on the page, for the browser tests:
    // its middle, and its top left corner, which no label covers.
    ct.flameBox = (name) => {
      const r = canvas.getBoundingClientRect();
      const b = rects.filter((b) => b.f.name === name).sort((a, c) => c.w - a.w)[0];
      return b ? { x: r.left + b.x + b.w / 2, y: r.top + b.y + rowH / 2, left: r.left + b.x, top: r.top + b.y } : null;
    };
    ct.mark("flameDraw", performance.now() - t0);
  }

  const at = (ev) => {
    const r = canvas.getBoundingClientRect();
    const x = ev.clientX - r.left, yy = ev.clientY - r.top;
    return rects.find((b) => x >= b.x && x < b.x + b.w && yy >= b.y && yy < b.y + rowH);
  };
  canvas.addEventListener("mousemove", (ev) => {
    const b = at(ev);
    canvas.style.cursor = b ? "pointer" : "default";
    status.textContent = b ? describe(b.f) : "";
  });
  const describe = (f) => {
    let s = `${f.name}: ${ct.dur(f.value)}, ${ct.pct(f.value, tree.value)} of all`;
    if (tree.diff) s += `; base ${ct.dur(f.base)} (${f.value >= f.base ? "+" : ""}${ct.dur(f.value - f.base)})`;
    if (tree.errors && f.parent && f.of > 0) s += `; ${failedOf(f)}`;
    return s;
  };
  // failedOf says how many of a box's calls failed. Above the inverted
  // graph's root, a box stands for calls of the function at the root.
  const failedOf = (f) => {
    let leaf = f;
    while (leaf.parent && leaf.parent.parent) leaf = leaf.parent;
    const whose = st.mode === "self" && leaf !== f ? ` of ${leaf.name} through it` : "";
    return `${ct.num(f.failed)} of ${ct.num(f.of)} calls${whose} returned an error (${ct.pct(f.failed, f.of)})`;
  };
  canvas.addEventListener("click", async (ev) => {
    const b = at(ev);
    if (!b) return;
    st.zoom = pathOf(b.f).join("\n");
    save();
    draw();
    if (!b.f.parent) {
      ct.show(details, ct.el("span", { class: "muted" }, "All calls."));
      return;
    }
    if (ct.standalone) {
      ct.show(details, ct.el("b", {}, b.f.name), " ", describe(b.f));
      return;
    }
    ct.show(details, ct.el("b", {}, b.f.name), " ", describe(b.f), " · ", ct.el("a", { href: ct.href("func", Object.assign({ name: b.f.name }, sel)) }, "function view →"),
      ct.el("p", { class: "muted" }, "Loading chains…"));
    try {
      const fv = await ct.api("func", Object.assign({ name: b.f.name }, sel));
      details.lastChild.replaceWith(ct.el("div", { id: "flame-chains" }, ct.el("h2", {}, `Every chain that reached ${b.f.name}`), ct.renderChains(fv.chains.slice(0, 10), (fv.more_chains || 0) + Math.max(0, fv.chains.length - 10), sel)));
    } catch (e) {
      details.lastChild.replaceWith(ct.el("p", { class: "error" }, e.message));
    }
  });
  const onResize = () => draw();
  window.addEventListener("resize", onResize);
  if (!ct.onCleanup(root, () => window.removeEventListener("resize", onResize))) return;
  await rebuild();
};
