// The timeline: one lane per goroutine, calls as nested bars over time.
// The server merges calls narrower than a pixel into blocks, so a
// response stays small; while it is on its way, the last response is
// redrawn at the new scale, so pan and zoom never wait for the network.
// A call that returned an error is outlined in red, a block holding such
// calls underlined in red. A call's details show its arguments and
// results, when recorded with --args: the server sends them for the
// calls drawn apart only. Narrowed to some requests (trace-id, span),
// its lanes are the goroutines they ran in, with their calls alone, and
// it opens on their time.
"use strict";

ct.views = ct.views || {};

ct.views.timeline = async function (root, params, opts) {
  const embedded = !!(opts && opts.embedded);
  const sel = ct.selection(params), key = ct.selKey(sel);
  let L;
  if (key) {
    ct.selLanes = ct.selLanes || {};
    L = ct.selLanes[key] = ct.selLanes[key] || await ct.api("lanes", sel);
  } else {
    L = ct.lanes = ct.lanes || await ct.api("lanes");
  }
  const nL = L.g.length;
  const rulerH = 20, headH = 14, rowH = 13, maxRows = 48, gap = 3;
  const failRed = "#d40000";
  const laneY = new Float64Array(nL + 1); // top of each lane, in the scrolled space
  for (let i = 0; i < nL; i++) laneY[i + 1] = laneY[i] + headH + Math.min(L.depth[i], maxRows) * rowH + gap;
  const laneOf = new Map(L.g.map((g, i) => [g, i]));
  const end = Math.max(L.end_ns, 1);
  // Home is the whole trace, or the requests' time, a sliver of it.
  const home = [0, end];
  if (key && L.last_ns > L.first_ns) {
    const pad = Math.max((L.last_ns - L.first_ns) * 0.02, 50);
    home[0] = Math.max(0, L.first_ns - pad);
    home[1] = Math.min(end, L.last_ns + pad);
  }
  const num = (k, def) => { const v = Number(params.get(k)); return params.has(k) && Number.isFinite(v) ? v : def; };
  const st = { from: Math.max(0, num("from", home[0])), to: num("to", home[1]), y: 0, mark: params.has("mark") ? num("mark", 0) : null, g: num("g", 0) };
  // A window from the URL is kept inside the trace, and at least 50 ns
  // wide, as setWindow keeps the ones the user makes.
  st.to = Math.min(st.to, end);
  if (!(st.to - st.from >= 50)) { st.from = 0; st.to = end; }
  if (laneOf.has(st.g)) st.y = Math.max(0, laneY[laneOf.get(st.g)] - 4);

  const canvas = ct.el("canvas", { id: "tl-canvas", tabindex: 0 });
  const status = ct.el("div", { id: "tl-status", class: "muted" }, " ");
  const details = ct.el("div", { class: "details", id: "tl-details" }, ct.el("span", { class: "muted" }, "Wheel or W/S to zoom, drag or A/D to pan (shift+wheel scrolls lanes). Click a bar for its call, a lane's title for who started the goroutine."));
  const zoomBy = (f) => { const c = (st.from + st.to) / 2; setWindow(c - (c - st.from) * f, c + (st.to - c) * f); };
  ct.show(root, embedded ? null : ct.selBanner(sel, "timeline", params),
    ct.el("div", { class: "toolbar" },
      ct.el("button", { id: "tl-in", onclick: () => zoomBy(0.5) }, "Zoom in"),
      ct.el("button", { id: "tl-out", onclick: () => zoomBy(2) }, "Zoom out"),
      ct.el("button", { id: "tl-reset", onclick: () => setWindow(home[0], home[1]) }, key ? "Their time" : "Whole trace"),
      ct.el("form", { id: "tl-goto", onsubmit: (ev) => {
        ev.preventDefault();
        const g = Number(ev.target.elements.g.value);
        if (!laneOf.has(g)) { status.textContent = `no goroutine g${g} with traced calls`; return; }
        st.g = g;
        st.y = Math.max(0, laneY[laneOf.get(g)] - 4);
        schedule();
      } }, ct.el("input", { name: "g", placeholder: "goroutine", size: 9, "aria-label": "Go to goroutine" })),
      ct.el("span", { id: "tl-window", class: "muted" }),
      ct.el("span", { class: "muted" }, `${ct.num(nL)} goroutines`)),
    canvas, status, details);

  let data = null;      // the last response: {from, stride (numbers a bar takes), lanes: Map, ...}
  let inflight = null, timer = 0, rects = [];
  const W = () => canvas.clientWidth || 1200;
  const H = () => Math.max(240, Math.min(window.innerHeight - 190, laneY[nL] + rulerH + 4));
  const visibleLanes = () => {
    let lo = 0, hi = nL;
    while (lo < hi) { const m = (lo + hi) >> 1; if (laneY[m + 1] <= st.y) lo = m + 1; else hi = m; }
    let l1 = lo;
    while (l1 < nL && laneY[l1] < st.y + H() - rulerH) l1++;
    return [lo, l1];
  };
  function setWindow(from, to) {
    const span = Math.max(to - from, 50);
    from = Math.max(0, Math.min(from, end - span));
    st.from = from;
    st.to = Math.min(from + span, Math.max(end, from + span));
    schedule();
  }
  function schedule() {
    requestAnimationFrame(draw);
    clearTimeout(timer);
    timer = setTimeout(load, 30);
  }
  async function load() {
    const [a, b] = visibleLanes();
    const l0 = Math.max(0, a - 2), l1 = Math.min(nL, Math.max(b + 2, l0 + 1));
    const q = { from: Math.floor(st.from), to: Math.ceil(st.to), px: Math.round(W()), l0, l1: Math.min(l1, l0 + 400) };
    if (data && data.q.from === q.from && data.q.to === q.to && data.q.px === q.px && data.q.l0 <= a && data.q.l1 >= Math.min(b, data.q.l0 + 400)) return;
    if (inflight) inflight.abort();
    const ac = (inflight = new AbortController());
    const t0 = performance.now();
    canvas.dataset.loading = "1";
    try {
      const res = await fetch("/api/timeline?" + new URLSearchParams(Object.assign({}, q, sel)), { signal: ac.signal });
      if (!res.ok) throw new Error(await res.text());
      const r = await res.json();
      const lanes = new Map(), values = new Map();
      for (const l of r.lanes) {
        lanes.set(l.lane, l.items);
        if (l.values) values.set(l.lane, l.values);
      }
      data = { q, from: r.from_ns, stride: r.stride, lanes, values, errors: r.errors || {} };
      if (r.truncated) status.textContent = "too many bars at this zoom: lanes past the last drawn are left empty; zoom in";
      ct.mark("timelineFetch", performance.now() - t0);
      ct.replaceURL("timeline", Object.assign({ from: q.from, to: q.to, g: st.g || "", mark: st.mark ?? "" }, sel));
      draw();
      ct.mark("timelineUpdate", performance.now() - t0);
    } catch (e) {
      if (e.name !== "AbortError") status.textContent = e.message;
    } finally {
      if (inflight === ac) {
        inflight = null;
        delete canvas.dataset.loading;
      }
    }
  }

  function draw() {
    const t0 = performance.now();
    const w = W(), h = H();
    const g = ct.paint(canvas, w, h, "11px system-ui, sans-serif");
    const k = w / (st.to - st.from);
    const [a, b] = visibleLanes();
    rects = [];
    let drawn = 0, failed = 0;
    for (let i = a; i < b; i++) {
      const top = laneY[i] - st.y + rulerH;
      g.fillStyle = i === laneOf.get(st.g) ? "#e2ecf8" : i % 2 ? "#f7f8fa" : "#ffffff";
      g.fillRect(0, top, w, laneY[i + 1] - laneY[i]);
      const items = data && data.lanes.get(i);
      if (items) {
        const off = data.from - st.from;
        for (let j = 0; j < items.length; j += data.stride) {
          const depth = items[j + 3];
          if (depth > maxRows) continue;
          let x = (items[j] + off) * k, bw = items[j + 1] * k;
          if (x + bw < 0 || x > w) continue;
          if (x < 0) { bw += x; x = 0; }
          bw = Math.min(bw, w - x);
          const y = top + headH + (depth - 1) * rowH;
          const fn = items[j + 2], n = items[j + 4];
          g.globalAlpha = n > 1 ? 0.55 : 1;
          g.fillStyle = fn ? ct.colour(ct.names[fn] || "?") : "#9aa3ad";
          g.fillRect(x, y, Math.max(bw - 0.3, 0.8), rowH - 1);
          g.globalAlpha = 1;
          if (bw > 30) {
            // A block counts its calls' callees too: it is named by its
            // first call.
            const label = ct.fitText(g, n > 1 ? `${ct.names[items[j + 6]] || "?"} … ${ct.num(n)} calls` : ct.names[fn], bw - 4);
            if (label) { g.fillStyle = "#111"; g.fillText(label, x + 2, y + rowH / 2); }
          }
          if (items[j + 7] > 0) {
            markFailed(g, x, y, bw, n > 1);
            failed++;
          }
          rects.push({ x, y, w: Math.max(bw, 1), lane: i, j, items, errors: data.errors, values: data.values.get(i) });
          drawn++;
        }
      }
      // The lane's title: the goroutine, and who started it.
      g.fillStyle = "#1d232b";
      const parent = L.parent[i] ? ` ← g${L.parent[i]}` : "";
      g.fillText(`g${L.g[i]}${parent}  ${ct.names[L.start_func[i]] || ""}  (${ct.num(L.calls[i])} calls)`, 4, top + headH / 2);
    }
    ruler(g, w, k);
    if (st.mark !== null) {
      const x = (st.mark - st.from) * k;
      g.strokeStyle = "#b12cd6";
      g.beginPath(); g.moveTo(x, 0); g.lineTo(x, h); g.stroke();
    }
    root.querySelector("#tl-window").textContent = `${ct.dur(st.from)} – ${ct.dur(st.to)} (${ct.dur(st.to - st.from)} shown)`;
    canvas.dataset.bars = drawn;
    canvas.dataset.failed = failed;
    // Where the bars of single calls are on the page, with the calls'
    // indexes in their lanes, for the browser tests; and those of them
    // that stand for failed calls.
    ct.callBars = () => {
      const r = canvas.getBoundingClientRect();
      return rects.filter((b) => b.items[b.j + 4] === 1)
        .map((b) => ({ x: r.left + b.x, y: r.top + b.y, w: b.w, h: rowH - 1, g: L.g[b.lane], fn: ct.names[b.items[b.j + 2]], call: b.items[b.j + 5], failed: b.items[b.j + 7] > 0 }));
    };
    ct.failedBars = () => ct.callBars().filter((b) => b.failed);
    // Where lane i's title is on the page, for the browser tests.
    ct.laneTitle = (i) => {
      const r = canvas.getBoundingClientRect();
      return { x: r.left + 8, y: r.top + laneY[i] - st.y + rulerH + headH / 2 };
    };
    canvas.dataset.span = Math.round(st.to - st.from);
    ct.mark("timelineDraw", performance.now() - t0);
  }

  // markFailed marks a bar that stands for failed calls: a call is
  // outlined in red, or filled red where too narrow for an outline to
  // show; a block, which holds other calls too, is underlined.
  function markFailed(g, x, y, bw, block) {
    g.fillStyle = failRed;
    if (block) {
      g.fillRect(x, y + rowH - 4, Math.max(bw - 0.3, 1.5), 3);
    } else if (bw < 5) {
      g.fillRect(x, y, Math.max(bw, 1.5), rowH - 1);
    } else {
      g.strokeStyle = failRed;
      g.lineWidth = 1.5;
      g.strokeRect(x + 0.75, y + 0.75, bw - 1.8, rowH - 2.5);
      g.lineWidth = 1;
      g.beginPath(); // and a corner, to show at a glance on a bar that is all red
      g.moveTo(x + bw - 7, y); g.lineTo(x + bw - 0.3, y); g.lineTo(x + bw - 0.3, y + 7);
      g.fill();
    }
  }

  // ruler draws the time axis: a tick every 1, 2 or 5 times a power of
  // ten, about every 100 pixels.
  function ruler(g, w, k) {
    g.fillStyle = "#ffffff";
    g.fillRect(0, 0, w, rulerH);
    g.strokeStyle = "#c3c9d0";
    g.beginPath(); g.moveTo(0, rulerH - 0.5); g.lineTo(w, rulerH - 0.5); g.stroke();
    const raw = (st.to - st.from) / Math.max(1, w / 100);
    const p10 = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p10).find((s) => s >= raw);
    g.fillStyle = "#65707d";
    g.beginPath();
    for (let t = Math.ceil(st.from / step) * step, n = 0; t <= st.to && n < 1000; t += step, n++) {
      const x = Math.round((t - st.from) * k) + 0.5;
      g.moveTo(x, rulerH - 6); g.lineTo(x, rulerH);
      g.fillText(ct.dur(t), x + 3, rulerH / 2 - 1);
    }
    g.stroke();
  }

  const pos = (ev) => { const r = canvas.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
      if (ev.shiftKey) st.y = Math.max(0, Math.min(laneY[nL] - 40, st.y + ev.deltaY));
      else { const dt = ev.deltaX / W() * (st.to - st.from); setWindow(st.from + dt, st.to + dt); return; }
      schedule();
      return;
    }
    const [x] = pos(ev);
    const f = Math.exp(ev.deltaY * 0.002);
    const t = st.from + (x / W()) * (st.to - st.from);
    setWindow(t - (t - st.from) * f, t + (st.to - t) * f);
  }, { passive: false });
  let drag = null;
  canvas.addEventListener("mousedown", (ev) => { const [x, y] = pos(ev); drag = { x, y, from: st.from, to: st.to, sy: st.y, moved: false }; });
  window.addEventListener("mouseup", onUp);
  window.addEventListener("mousemove", onMove);
  function onMove(ev) {
    if (!drag) {
      if (ev.target === canvas) { const r = hit(...pos(ev)); status.textContent = r ? describe(r) : " "; }
      return;
    }
    const [x, y] = pos(ev);
    if (Math.abs(x - drag.x) + Math.abs(y - drag.y) > 3) drag.moved = true;
    if (!drag.moved) return;
    const dt = ((x - drag.x) / W()) * (drag.to - drag.from);
    st.y = Math.max(0, Math.min(laneY[nL] - 40, drag.sy - (y - drag.y)));
    setWindow(drag.from - dt, drag.to - dt);
  }
  function onUp(ev) {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (!d.moved && ev.target === canvas) click(...pos(ev));
  }
  const hit = (x, y) => {
    for (let i = rects.length - 1; i >= 0; i--) {
      const r = rects[i];
      if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + rowH) return r;
    }
    return null;
  };
  const describe = (r) => {
    const it = r.items, j = r.j, n = it[j + 4], fn = it[j + 2];
    if (n === 1) return `${ct.names[fn]}${ct.valuesText(valuesOf(r)).join("")}: ${ct.dur(it[j + 1])}${heldIn(r)} at ${ct.dur(data.from + it[j])}${it[j + 7] ? " " + errorOf(r) : ""}`;
    const which = fn ? `calls of ${ct.names[fn]} and their callees` : `calls and callees, from ${ct.names[it[j + 6]]} on`;
    return `${ct.num(n)} ${which} merged, ${ct.dur(it[j + 1])}${failedIn(r)}: zoom in to see them`;
  };
  // errorOf is the error of a bar's one call; failedIn says how many of a
  // block's calls returned one.
  const errorOf = (r) => ct.errText(r.errors[Math.abs(r.items[r.j + 7])] || { type: "?", message: "" });
  const failedIn = (r) => (r.items[r.j + 7] ? `, ${ct.num(r.items[r.j + 7])} failed` : "");
  // heldIn says how long a bar's one call waited for the trace writer:
  // drawn at its wall time, its duration everywhere else leaves that out.
  const heldIn = (r) => (r.items[r.j + 8] > 0 ? ` (held up ${ct.dur(r.items[r.j + 8])} by the trace writer)` : "");
  // valuesOf is the arguments and results of a bar's one call, if any.
  const valuesOf = (r) => r.values && r.items[r.j + 4] === 1 ? r.values[r.items[r.j + 5]] : undefined;
  async function click(x, y) {
    const r = hit(x, y);
    if (r) {
      const it = r.items, j = r.j, fn = it[j + 2], g = L.g[r.lane], one = it[j + 4] === 1;
      const start = data.from + it[j], d = it[j + 1];
      ct.show(details, 
        fn ? ct.callSig(ct.names[fn], valuesOf(r), sel) : ct.el("b", {}, "calls"),
        ` in g${g}: ${one ? "" : ct.num(it[j + 4]) + " calls merged" + failedIn(r) + ", "}${ct.dur(d)}${heldIn(r)}, from ${ct.dur(start)} to ${ct.dur(start + d)} · `,
        ct.el("a", { href: "#", onclick: (e) => { e.preventDefault(); setWindow(start - d * 0.1, start + d * 1.1); } }, "zoom to it"),
        " · ", ct.el("a", { href: ct.href("tree", Object.assign({ g }, sel)) }, "call tree of g" + g),
        one && it[j + 7] ? ct.el("div", { class: "error", id: "tl-error" }, errorOf(r)) : null);
      return;
    }
    // A lane's title: who started the goroutine.
    for (let i = visibleLanes()[0]; i < nL && laneY[i] - st.y + rulerH < y; i++) {
      if (y - (laneY[i] - st.y + rulerH) < headH) {
        const info = await ct.api("lane", Object.assign({ g: L.g[i] }, sel));
        ct.show(details, ct.el("b", {}, `goroutine ${info.g}`), ` · ${ct.num(info.calls)} calls`,
          info.parent ? ct.el("div", {}, `started by g${info.parent}${info.creator ? " in " + info.creator + " (" + info.creator_at + ")" : ""}${info.start_func ? ", running " + info.start_func : ""}`) : ct.el("div", { class: "muted" }, "no parent recorded"),
          info.started_in ? ct.el("div", { id: "tl-started-in" }, "started in the chain ", ct.steps(info.started_in, true)) : null,
          (info.spawned_from || []).map((s) => ct.el("div", { class: "muted" }, "goroutines running its first chain came from ", ct.steps(s, true))));
      }
    }
  }
  // Keys as in other trace viewers: W and S zoom, A and D pan.
  canvas.addEventListener("keydown", (ev) => {
    const span = st.to - st.from, c = (st.from + st.to) / 2;
    const k = { w: 0.7, s: 1 / 0.7 }[ev.key];
    if (k) setWindow(c - (span * k) / 2, c + (span * k) / 2);
    else if (ev.key === "a" || ev.key === "d") {
      const dt = (ev.key === "a" ? -0.2 : 0.2) * span;
      setWindow(st.from + dt, st.to + dt);
    } else return;
    ev.preventDefault();
  });
  canvas.addEventListener("mousedown", () => canvas.focus());
  const onResize = () => schedule();
  window.addEventListener("resize", onResize);
  const undo = () => {
    window.removeEventListener("resize", onResize);
    window.removeEventListener("mouseup", onUp);
    window.removeEventListener("mousemove", onMove);
    if (inflight) inflight.abort();
    clearTimeout(timer);
  };
  if (!ct.onCleanup(root, undo)) return;
  draw();
  load();
};
