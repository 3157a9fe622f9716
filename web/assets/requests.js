// The Requests view: the program's OpenTelemetry spans, its requests,
// slowest first, as calltrail spans lists them; and, for the requests
// chosen (trace-id, and span within them), their calls in every
// goroutine they ran in: the timeline and the call tree narrowed to
// them, the calls that failed, and where their time went, on and off CPU
// where the trace has a CPU profile. Every view takes the same choice,
// as the command line's views take --trace-id and --span.
"use strict";

ct.views = ct.views || {};

// spanKinds are OpenTelemetry's names of span kinds.
ct.spanKinds = ["", "internal", "server", "client", "producer", "consumer"];

// spanSelection is the choice that opens span s: its request, by trace
// id, and, for a span under another of this program's, the spans of its
// name within it (the command line chooses no finer).
ct.spanSelection = (s) => s.nested ? { "trace-id": s.trace_id, span: "^" + ct.quoteRE(s.name) + "$" } : { "trace-id": s.trace_id };

// spanTable lists spans as calltrail spans does, each linked to its calls.
function spanTable(spans, id) {
  return ct.el("div", { id, class: "spans" }, ct.table(["duration", "calls", "goroutines", "errors", "trace id", "span", "kind", "time in (own time)"],
    spans.map((s) => [
      ct.dur(s.duration_ns) + (s.ended ? "" : " (not ended)"),
      ct.num(s.calls),
      ct.num(s.goroutines),
      s.errors ? ct.el("span", { class: "error" }, ct.num(s.errors)) : ct.el("span", { class: "muted" }, "0"),
      ct.el("code", {}, s.trace_id),
      ct.el("a", { href: ct.href("requests", ct.spanSelection(s)), class: "req", title: "its calls" }, s.name || "(no name)"),
      ct.spanKinds[s.kind] || "",
      s.functions.map((f, i) => [i ? ", " : "", `${f.name} ${ct.dur(f.self_ns)}`]),
    ])));
}

ct.views.requests = async function (root, params) {
  const sel = ct.selection(params);
  if (ct.selKey(sel)) await requestView(root, sel);
  else await requestList(root);
};

const noSpans = "This trace has no OpenTelemetry spans: the program started none, or was not built by calltrail build, run or test with the OpenTelemetry SDK.";

async function requestList(root) {
  const list = await ct.api("requests", { top: 200 });
  if (!list.total) {
    ct.show(root, ct.el("h1", {}, "Requests"), ct.el("p", { id: "rq-none", class: "muted" }, noSpans));
    return;
  }
  const input = (k, label, ph) => ct.el("label", {}, label + " ", ct.el("input", { name: k, placeholder: ph, class: "wide" }));
  const form = ct.el("form", { class: "toolbar filters", id: "rq-choose" },
    input("trace-id", "trace id", "32 hex digits"), input("span", "span", "regexp"), ct.el("button", { type: "submit" }, "Show their calls"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = {};
    for (const k of ["trace-id", "span"]) p[k] = form.elements[k].value.trim();
    location.hash = ct.href("requests", p);
  });
  ct.show(root,
    ct.el("h1", {}, "Requests"),
    ct.el("p", { class: "muted" }, `The program's ${ct.num(list.total)} OpenTelemetry spans, slowest first. A span's calls are those that ran for it or for a span under it, in every goroutine, those it started too. Choose one to see its calls.`),
    form,
    spanTable(list.spans, "rq-list"),
    list.total > list.spans.length ? ct.el("p", { class: "muted" }, `and ${ct.num(list.total - list.spans.length)} shorter ones: choose by trace id or span name above`) : null);
}

async function requestView(root, sel) {
  const key = ct.selKey(sel);
  ct.selLanes = ct.selLanes || {};
  const [list, lanes, failed] = await Promise.all([
    ct.api("requests", Object.assign({ top: 100 }, sel)),
    ct.selLanes[key] || ct.api("lanes", sel),
    ct.api("failed", Object.assign({ limit: 100 }, sel)),
  ]);
  ct.selLanes[key] = lanes; // the timeline below draws them
  const card = (v, label) => ct.el("div", { class: "card" }, ct.el("b", {}, v), ct.el("span", {}, label));
  const first = Math.min(...list.spans.map((s) => s.start_ns)), last = Math.max(...list.spans.map((s) => s.start_ns + s.duration_ns));
  const calls = lanes.calls.reduce((a, b) => a + b, 0);
  const title = ct.selText(sel);
  const timeline = ct.el("div", { id: "rq-timeline" }), tree = ct.el("div", { id: "rq-tree" });
  const funcs = ct.el("div", { id: "rq-funcs" }, ct.el("p", { class: "muted" }, "Analysing their calls…"));
  ct.show(root,
    ct.el("p", {}, ct.el("a", { href: "#requests" }, "← all requests")),
    ct.el("h1", { id: "rq-title" }, title[0].toUpperCase() + title.slice(1)),
    ct.el("div", { class: "cards", id: "rq-cards" },
      card(ct.dur(last - first), list.total > 1 ? "from the first span's start to the last's end" : "duration"),
      card(ct.num(calls), "calls"),
      card(ct.num(lanes.g.length), "goroutines"),
      card(ct.num(failed.total), "calls returned an error"),
      card(ct.num(list.total), list.total === 1 ? "span" : "spans")),
    ct.el("p", {}, "Their calls alone in ",
      ct.el("a", { href: ct.href("overview", sel) }, "the overview"), " · ",
      ct.el("a", { href: ct.href("flame", sel) }, "the flame graph"), " · ",
      ct.el("a", { href: ct.href("timeline", sel) }, "the timeline"), " · ",
      ct.el("a", { href: ct.href("tree", sel) }, "the call tree")),
    ct.el("h2", {}, "Failed calls"),
    failedList(failed, sel),
    ct.el("h2", {}, "Timeline"),
    timeline,
    ct.el("h2", {}, "Call tree"),
    tree,
    ct.el("h2", {}, "Where their time went"),
    funcs,
    ct.el("h2", {}, list.total === 1 ? "Span" : "Spans"),
    spanTable(list.spans, "rq-spans"),
    list.total > list.spans.length ? ct.el("p", { class: "muted" }, `and ${ct.num(list.total - list.spans.length)} shorter ones`) : null);
  // The tree opens on the goroutine that began them: a request's, the
  // one that served it.
  const began = list.spans.reduce((a, s) => (s.start_ns < a.start_ns ? s : a), list.spans[0]);
  const q = new URLSearchParams(sel);
  await Promise.all([
    ct.views.timeline(timeline, q, { embedded: true }),
    ct.views.tree(tree, q, { embedded: true, open: began && began.goroutine }),
    whereTimeWent(funcs, sel),
  ]);
}

// failedList lists the calls that returned an error, each with its error
// and a link to it on the timeline.
function failedList(failed, sel) {
  if (!failed.total) return ct.el("p", { class: "muted", id: "rq-failed" }, "None of their calls returned an error.");
  return ct.el("div", { id: "rq-failed" },
    ct.el("ul", {}, failed.calls.map((c) => ct.el("li", {},
      ct.el("b", {}, `g${c.g}`), " ", ct.callSig(ct.names[c.func] || "?", null, sel), " ",
      ct.el("span", { class: "error" }, ct.errText(c.error)), " ",
      ct.el("a", { href: ct.timelineHref(c.g, c.start_ns, c.duration_ns, sel), class: "muted", title: "open in the timeline" }, `at ${ct.dur(c.start_ns)}, ${ct.dur(c.duration_ns)}`)))),
    failed.total > failed.calls.length ? ct.el("p", { class: "muted" }, `and ${ct.num(failed.total - failed.calls.length)} more`) : null);
}

// whereTimeWent lists the functions the calls spent the most time in,
// from the analysis of those calls alone: the server reads the trace
// again for it, which can take a moment.
async function whereTimeWent(box, sel) {
  try {
    const o = await ct.api("overview", sel);
    ct.show(box,
      // Only the CPU profile's samples say which request they were taken
      // for (a label per span): the analysis of a request leaves the
      // other profiles out, as calltrail report --trace-id does.
      o.profiles_left_out ? ct.el("p", { class: "muted", id: "rq-cpu" }, o.has_cpu ?
        "On CPU counts the CPU profile's samples taken for this request; the block and mutex profiles, which do not tell requests apart, are left out." :
        "Time on CPU and waiting is not split for this request: the trace's profiles do not tell requests apart (a CPU profile recorded without span labels, or block and mutex profiles).") : null,
      o.thin_cpu ? ct.el("p", { class: "muted" }, "The trace's CPU profile has too few samples to split time on and off CPU.") : null,
      ct.el("div", { class: "cols" },
        ct.el("div", {}, ct.el("h3", {}, "By self time"), ct.funcTable(o, o.top_self, sel)),
        ct.el("div", {}, ct.el("h3", {}, "By total time"), ct.funcTable(o, o.top_total, sel))));
  } catch (e) {
    ct.show(box, ct.el("p", { class: "error" }, e.message));
  }
}
