// Helpers shared by the views: the API, formatting, building DOM.
"use strict";

const ct = (window.ct = {
  names: [],        // function names by id
  overview: null,
  perf: {},         // timings the browser tests log: name -> [ms...]
});

ct.api = async function (path, params) {
  const q = params ? "?" + new URLSearchParams(params).toString() : "";
  const res = await fetch("/api/" + path + q);
  if (!res.ok) {
    throw new Error((await res.text()).trim() || res.statusText);
  }
  return res.json();
};

ct.mark = function (name, ms) {
  (ct.perf[name] = ct.perf[name] || []).push(Math.round(ms * 100) / 100);
};

// dur formats nanoseconds with three significant digits.
ct.dur = function (ns) {
  const units = [["s", 1e9], ["ms", 1e6], ["µs", 1e3]];
  for (const [u, f] of units) {
    if (Math.abs(ns) >= f) return +(ns / f).toPrecision(3) + u;
  }
  return Math.round(ns) + "ns";
};

// baseName is the last element of a path: temporary directories say
// nothing.
ct.baseName = (p) => String(p).split(/[\\/]/).pop();

ct.num = (n) => n.toLocaleString("en-US");
ct.pct = (a, b) => (b > 0 ? (100 * a / b).toFixed(a / b < 0.1 ? 2 : 1) + "%" : "–");

// el builds an element: el("a", {href: "#x", class: "y"}, "text", child).
ct.el = function (tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat(Infinity)) {
    if (k === undefined || k === null || k === false) continue;
    e.append(k instanceof Node ? k : String(k));
  }
  return e;
};

// show replaces root's children, leaving out null and false.
ct.show = function (root, ...kids) {
  root.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false && k !== ""));
};

// funcLink links a function to its view, of the calls of the requests
// sel selects when it is given (see selection).
ct.funcLink = (name, sel) => ct.el("a", { href: ct.href("func", Object.assign({ name }, sel)), class: "func" }, name);

// selection returns the parameters of a view's that narrow it to the
// calls of some requests, as the command line's --trace-id and --span
// do: {} when there are none. Every view passes them on, to the API and
// in its links.
ct.selection = function (params) {
  const sel = {};
  for (const k of ["trace-id", "span"]) if (params && params.get(k)) sel[k] = params.get(k);
  return sel;
};
ct.selKey = (sel) => new URLSearchParams(sel || {}).toString();

// selText names the requests sel selects.
ct.selText = function (sel) {
  const t = sel["trace-id"], s = sel.span;
  if (t && s) return `request ${t}, spans matching ${s}`;
  return t ? `request ${t}` : `spans matching ${s}`;
};

// selBanner says that view shows the calls of the requests sel selects
// alone, and links to them and to the view of every call.
ct.selBanner = function (sel, view, params) {
  if (!ct.selKey(sel)) return null;
  const all = {};
  for (const [k, v] of params || []) if (!(k in sel)) all[k] = v;
  return ct.el("p", { class: "scope", id: "scope" }, "The calls of ", ct.el("a", { href: ct.href("requests", sel) }, ct.selText(sel)),
    " alone, in every goroutine they ran in. ", ct.el("a", { href: ct.href(view, all) }, "All calls"));
};

// steps shows a chain of calls, recursion folded as the server folds it:
// "main.main → main.rec ×30000 → (main.even → main.odd) ×2", its
// functions linked when links is set, to their views of the requests sel
// selects if given.
ct.steps = (steps, links, sel) => steps.map((s, i) => [
  i ? " → " : "",
  s.cycle ? ["(", ct.steps(s.cycle, links, sel), ")"] : links ? ct.funcLink(s.name, sel) : s.name,
  s.repeat > 1 ? ` ×${ct.num(s.repeat)}` : "",
]);

// quoteRE quotes a name for a regular expression.
ct.quoteRE = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// href makes a link to a view with its parameters.
ct.href = function (view, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return "#" + view + (s ? "?" + s : "");
};

// replaceURL keeps a view's state in the address without a history entry,
// unless the address has moved to another view: that view's hashchange
// may not have run yet, and the router, reading the address, would come
// back to this one. (A timeline fetch answered just after the user left
// did exactly that.)
ct.replaceURL = function (view, params) {
  // The page calltrail flame writes is its one view, without a router.
  if (!ct.standalone && location.hash.slice(1).split("?")[0] !== view) return;
  history.replaceState(null, "", ct.href(view, params));
};

// timelineHref opens the timeline on one call, with some room around it,
// among the calls of the requests sel selects, if given.
ct.timelineHref = function (g, start, dur, sel) {
  const pad = Math.max(dur * 0.25, 1000);
  return ct.href("timeline", Object.assign({ g, from: Math.max(0, Math.floor(start - pad)), to: Math.ceil(start + dur + pad), mark: start }, sel));
};

// colour gives a function a stable warm colour from its name.
ct.colour = function (name) {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  h >>>= 0;
  const hue = 10 + (h % 40), sat = 65 + ((h >>> 8) % 25), light = 55 + ((h >>> 16) % 15);
  return `hsl(${hue},${sat}%,${light}%)`;
};

// diffColour colours a box by its change from the base, red for slower
// and blue for faster, deeper for larger changes (against the box's own
// time, or a hundredth of all), grey for no change.
ct.diffColour = function (value, base, all) {
  const delta = value - base;
  if (Math.abs(delta) < 0.01 * Math.max(value, base)) return "#c8c8c8";
  const s = Math.min(1, Math.abs(delta) / Math.max(base, value, Math.floor(all / 100), 1));
  return `hsl(${delta < 0 ? 215 : 0},${Math.round(40 + 50 * s)}%,${Math.round(80 - 30 * s)}%)`;
};

// errorColour colours a box by the share of its calls that returned an
// error: light grey for none, from pale to deep red for some to all. The
// square root makes a share of a few percent show.
ct.errorColour = function (failed, calls) {
  if (!(failed > 0) || !(calls > 0)) return "#e3e3e3";
  const s = Math.sqrt(Math.min(1, failed / calls));
  return `hsl(0,${Math.round(55 + 35 * s)}%,${Math.round(86 - 42 * s)}%)`;
};

// errText shows an error as calltrail's command line does:
// err=*fs.PathError "open x: no such file or directory".
ct.errText = (e) => `err=${e.type} ${JSON.stringify(e.message)}`;

// valuesText shows a call's arguments and results, recorded with --args,
// as calltrail replay does: ["(\"abc\", 3)", " = 42"]; empty strings for
// what was not recorded.
ct.valuesText = (v) => [v && v.args ? `(${v.args.join(", ")})` : "", v && v.results ? ` = ${v.results.join(", ")}` : ""];

// callSig is a call's function, linked (to its view of the requests sel
// selects, if given), with its arguments and results.
ct.callSig = function (name, v, sel) {
  const [args, results] = ct.valuesText(v);
  return ct.el("span", { class: "call" }, ct.funcLink(name, sel),
    args ? ct.el("span", { class: "args" }, args) : null,
    results ? ct.el("span", { class: "results" }, results) : null);
};

// paint sizes a canvas to w×h CSS pixels at the screen's density, and
// returns its context cleared, with the font set for labels.
ct.paint = function (canvas, w, h, font) {
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  canvas.style.height = h + "px";
  const g = canvas.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = font;
  g.textBaseline = "middle";
  return g;
};

// fitText clips a label to a width in pixels.
ct.fitText = function (ctx, text, width) {
  if (width < 14) return "";
  if (ctx.measureText(text).width <= width) return text;
  const per = ctx.measureText("m").width * 0.8;
  let n = Math.floor(width / per) - 1;
  if (n < 2) return "";
  return text.slice(0, n) + "…";
};

ct.table = function (head, rows) {
  return ct.el("table", {},
    ct.el("thead", {}, ct.el("tr", {}, head.map((h) => ct.el("th", { class: h === "function" ? "name" : "" }, h)))),
    ct.el("tbody", {}, rows.map((r) => ct.el("tr", {}, r.map((c, i) => ct.el("td", { class: head[i] === "function" ? "name" : "" }, c))))));
};
