// The overview: what the trace holds, the findings, the top functions;
// narrowed to some requests (trace-id, span), what their calls did.
"use strict";

ct.views = ct.views || {};

// funcTable lists functions of overview o as the overview does: their
// time, with its split on and off CPU where the trace has a CPU profile,
// and their errors where some call returned one; of the calls of the
// requests sel selects, if given, whose overview o is.
ct.funcTable = function (o, fs, sel) {
  const head = ["self", "total", "calls", "max"].concat(o.has_cpu ? ["on CPU", "tracing", "waiting"] : [], o.errors ? ["errors"] : [], ["function"]);
  return ct.table(head, fs.map((f) => {
    const r = [ct.dur(f.self_ns), ct.dur(f.total_ns), ct.num(f.calls), ct.dur(f.max_ns)];
    if (o.has_cpu) r.push(ct.dur(f.cpu_ns || 0), ct.dur(f.tracing_ns || 0), ct.dur(f.wait_ns || 0));
    if (o.errors) r.push(errorsCell(f));
    r.push(ct.funcLink(f.name, sel));
    return r;
  }));
};

ct.views.overview = async function (root, params) {
  const sel = ct.selection(params);
  const o = ct.selKey(sel) ? await ct.api("overview", sel) : ct.overview;
  const card = (v, label) => ct.el("div", { class: "card" }, ct.el("b", {}, v), ct.el("span", {}, label));
  const linkify = (f) => {
    if (!f.function || !f.message.includes(f.function)) return f.message;
    const [a, ...b] = f.message.split(f.function);
    return [a, ct.funcLink(f.function), b.join(f.function)];
  };
  ct.show(root, ct.selBanner(sel, "overview", params),
    ct.el("h1", { id: "ov-program", title: o.program }, o.name || ct.baseName(o.file)),
    o.warning && ct.el("p", { class: "warning" }, o.warning),
    ct.el("div", { class: "cards", id: "ov-cards" },
      o.window_ns ? card(ct.dur(o.window_ns), "window (flight recorder)") : card(ct.dur(o.duration_ns), "duration"),
      card(ct.num(o.goroutines), "goroutines"),
      card(ct.num(o.calls), "calls"),
      card(ct.num(o.dropped), "dropped calls"),
      o.errors ? card(ct.num(o.errors), "calls returned an error") : null,
      o.full === "wait" && held(o),
      card(ct.num(o.functions), "functions"),
      card(o.go || "?", "Go")),
    o.base && ct.el("p", { class: "muted" }, `Compared with ${ct.baseName(o.base)} in the flame graph.`),
    ct.el("h2", {}, "Findings"),
    o.findings.length
      ? ct.el("ol", { class: "findings", id: "ov-findings" }, o.findings.map((f) => ct.el("li", {}, linkify(f))))
      : ct.el("p", { class: "muted", id: "ov-findings" }, "No findings: nothing stands out by calltrail's rules."),
    (o.top_errors || []).length ? [
      ct.el("h2", {}, "Functions that returned errors"),
      ct.el("div", { id: "ov-errors" }, ct.funcTable(o, o.top_errors, sel)),
    ] : null,
    goroutines(o.goroutine_summary, sel),
    ct.el("div", { class: "cols" },
      ct.el("div", {}, ct.el("h2", {}, "Top functions by self time"), ct.el("div", { id: "ov-self" }, ct.funcTable(o, o.top_self, sel))),
      ct.el("div", {}, ct.el("h2", {}, "Top functions by total time"), ct.el("div", { id: "ov-total" }, ct.funcTable(o, o.top_total, sel)))),
    ct.el("p", { class: "muted" }, ct.selKey(sel) ? `Analysed their calls in ${ct.dur(o.load_ns)}.` : `Loaded ${ct.baseName(o.file)} in ${ct.dur(o.load_ns)}.`));
};

// errorsCell shows how many of a function's calls returned an error, and
// what share of them.
function errorsCell(f) {
  if (!f.errors) return ct.el("span", { class: "muted" }, "0");
  return ct.el("span", { class: "error", title: `${ct.num(f.errors)} of ${ct.num(f.calls)} calls returned an error` }, `${ct.num(f.errors)} (${ct.pct(f.errors, f.calls)})`);
}

// held is the card of the time the program waited for the trace writer
// when its rings were full: how much tracing slowed it beyond each call's
// cost.
function held(o) {
  const c = ct.el("div", { class: "card", id: "ov-held", title: `goroutines waited ${ct.num(o.waits)} times for the trace writer, its rings full, for ${ct.dur(o.held_ns)} in all (summed over goroutines): the time tracing added to the program's beyond each call's cost` },
    ct.el("b", {}, o.waits ? ct.dur(o.held_ns) : "0"), ct.el("span", {}, "held up by tracing"));
  return c;
}

// goroutines shows how many goroutines were alive over the trace (a bar
// chart whose bars open the timeline at their time), how long they lived
// and worked, and which chains started them.
function goroutines(gs, sel) {
  if (!gs || gs.goroutines < 2) return null;
  const spread = (s) => `p50 ${ct.dur(s.p50_ns)}, p90 ${ct.dur(s.p90_ns)}, max ${ct.dur(s.max_ns)}`;
  const chart = ct.el("canvas", { id: "ov-live", class: "live", width: 960, height: 64, title: "goroutines alive; click a bar to see that time on the timeline" });
  const g = chart.getContext("2d");
  const alive = gs.alive, slice = gs.slice_ns, from = gs.from_ns || 0;
  const bw = chart.width / alive.length, top = Math.max(1, ...alive);
  g.fillStyle = "#7ea6d8";
  alive.forEach((n, i) => {
    const h = Math.max(n ? 1 : 0, Math.round((n / top) * (chart.height - 2)));
    g.fillRect(i * bw, chart.height - h, Math.max(bw - 1, 1), h);
  });
  const at = (ev) => Math.min(alive.length - 1, Math.max(0, Math.floor((ev.offsetX / chart.clientWidth) * alive.length)));
  chart.addEventListener("mousemove", (ev) => {
    const i = at(ev);
    chart.title = `${ct.num(alive[i])} goroutines alive from ${ct.dur(from + i * slice)} to ${ct.dur(from + (i + 1) * slice)}`;
  });
  chart.addEventListener("click", (ev) => {
    const i = at(ev);
    location.hash = ct.href("timeline", Object.assign({ from: from + i * slice, to: from + (i + 1) * slice }, sel));
  });
  return [
    ct.el("h2", {}, "Goroutines"),
    ct.el("p", { id: "ov-goroutines" },
      `${ct.num(gs.goroutines)} goroutines ran traced code, at most ${ct.num(gs.max_alive)} at one instant, ${ct.num(top)} in one ${ct.dur(slice)} bar below. `,
      `Lifetime ${spread(gs.lifetime)}; traced work ${spread(gs.work)}.`),
    chart,
    gs.started_by.length ? ct.el("div", { id: "ov-started" }, ct.table(["goroutines", "calls", "per call", "started by the chain"],
      gs.started_by.map((s) => [ct.num(s.goroutines), ct.num(s.calls), s.per_call.toFixed(1), ct.steps(s.chain, true, sel)]))) : null,
  ];
}
