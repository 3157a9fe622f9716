// The function view: figures, callers and callees around the function,
// the errors it returned and the chains it failed through, every chain
// that reached it, and a histogram of its calls' durations.
"use strict";

ct.views = ct.views || {};

// renderChains lists chains as calltrail chains prints them, of the
// calls of the requests sel selects if given.
ct.renderChains = function (chains, more, sel) {
  const list = ct.el("div", { class: "chains" }, chains.map((c) => ct.el("div", { class: "chain" },
    ct.el("div", { class: "path" }, ct.steps(c.path, true, sel)),
    (c.spawned_from || []).map((s) => ct.el("div", { class: "spawn" }, "in goroutines started from ", ct.steps(s, false))),
    ct.el("div", {}, `${ct.num(c.calls)} calls, total ${ct.dur(c.total_ns)}, mean ${ct.dur(c.mean_ns)}, max ${ct.dur(c.max_ns)}`,
      c.panics ? `, ${c.panics} panicked` : "",
      c.errors ? ct.el("span", { class: "error" }, `, ${ct.num(c.errors)} failed (${ct.pct(c.errors, c.calls)})`) : ""),
    ct.el("div", { class: "muted" }, "slowest: ", c.slowest.map((s, i) => [i ? ", " : "", callLink(s, false, sel)])))));
  if (more > 0) list.append(ct.el("p", { class: "muted" }, `and ${ct.num(more)} more chains`));
  return list;
};

// callLink links a call to the timeline (of the requests sel selects, if
// given); a call that failed is marked, its error in the mark's title,
// or in full when full is set.
function callLink(c, full, sel) {
  const a = ct.el("a", { href: ct.timelineHref(c.goroutine, c.start_ns, c.duration_ns, sel), class: "call" },
    `g${c.goroutine} at ${ct.dur(c.start_ns)}: ${ct.dur(c.duration_ns)}${c.exit ? " (" + c.exit + ")" : ""}`);
  if (!c.error) return a;
  return [a, full ? ct.el("span", { class: "error" }, " " + ct.errText(c.error)) : ct.el("span", { class: "error", title: ct.errText(c.error) }, " ✗")];
}

// errorsSection lists the errors f returned, the most first, then the
// chains it failed through with the errors of each, and the chains it
// never failed through: where a failure comes from is the question.
function errorsSection(f, sel) {
  if (!f.errors) return null;
  const failing = f.chains.filter((c) => c.errors > 0), fine = f.chains.filter((c) => !c.errors);
  const msgTable = (ms) => ct.table(["calls", "type", "message"], ms.map((m) => [ct.num(m.calls), ct.el("code", {}, m.type), ct.el("span", { class: "msg" }, m.message)]));
  return [
    ct.el("h2", {}, "Errors"),
    ct.el("div", { id: "fn-errors" },
      ct.el("p", {}, `${ct.num(f.errors)} of ${ct.num(f.calls)} calls returned an error (${ct.pct(f.errors, f.calls)}), `,
        `${ct.num(f.error_messages.length)} distinct:`),
      ct.el("div", { id: "fn-error-messages", class: "errors" }, msgTable(f.error_messages)),
      ct.el("h3", {}, `Failed through ${failing.length === 1 ? "one chain" : ct.num(failing.length) + " chains"}`),
      ct.el("div", { id: "fn-failing", class: "chains" }, failing.map((c) => ct.el("div", { class: "chain" },
        ct.el("div", { class: "path" }, ct.steps(c.path, true, sel)),
        (c.spawned_from || []).map((s) => ct.el("div", { class: "spawn" }, "in goroutines started from ", ct.steps(s, false))),
        ct.el("div", {}, ct.el("b", { class: "error" }, `${ct.num(c.errors)} of ${ct.num(c.calls)} calls failed`), ` (${ct.pct(c.errors, c.calls)})`),
        ct.el("div", { class: "errors" }, msgTable(c.messages || []))))),
      fine.length ? [
        ct.el("h3", {}, "Never failed through"),
        ct.el("div", { id: "fn-fine", class: "chains" }, fine.map((c) => ct.el("div", { class: "chain" },
          ct.el("div", { class: "path" }, ct.steps(c.path, true, sel)), ct.el("div", { class: "muted" }, `${ct.num(c.calls)} calls, none failed`)))),
      ] : null,
      f.more_chains ? ct.el("p", { class: "muted" }, `${ct.num(f.more_chains)} more chains not listed`) : null),
  ];
}

ct.views.func = async function (root, params) {
  const name = params.get("name") || "";
  if (!name) {
    ct.show(root, ct.el("p", {}, "Name a function in the box above."));
    return;
  }
  const sel = ct.selection(params);
  const f = await ct.api("func", Object.assign({ name }, sel));
  const o = ct.overview;
  const stat = (v, label, id) => ct.el("div", { class: "card", id }, ct.el("b", {}, v), ct.el("span", {}, label));
  const edgeTable = (es, id) => es.length
    ? ct.el("div", { id }, ct.table(["time", "calls", "function"], es.map((e) => [ct.dur(e.total_ns), ct.num(e.calls), e.name.startsWith("(") ? e.name : ct.funcLink(e.name, sel)])))
    : ct.el("p", { class: "muted", id }, "none traced");

  // The histogram: a bar per range of durations, made of the buckets the
  // quantiles come from; a click lists the bar's slowest calls.
  const hist = f.histogram;
  const peak = Math.max(1, ...hist.map((b) => b.count));
  const callsBox = ct.el("div", { id: "fn-bucket" }, ct.el("span", { class: "muted" }, "Click a bar to list its calls."));
  const bars = hist.map((b, i) => {
    const bar = ct.el("div", { class: "bar" + (b.count ? "" : " empty"), title: `${ct.dur(b.lo_ns)}–${ct.dur(b.hi_ns)}: ${ct.num(b.count)} calls`, "data-bucket": i });
    bar.style.height = (b.count ? Math.max(2, 100 * Math.log1p(b.count) / Math.log1p(peak)) : 0) + "%";
    if (b.count) bar.addEventListener("click", () => {
      bars.forEach((x) => x.classList.remove("sel"));
      bar.classList.add("sel");
      ct.show(callsBox, 
        ct.el("b", {}, `${ct.num(b.count)} calls of ${ct.dur(b.lo_ns)} to ${ct.dur(b.hi_ns)}`),
        b.count > b.slowest.length ? ct.el("span", { class: "muted" }, ` (the ${b.slowest.length} slowest)`) : "",
        ct.el("ul", {}, b.slowest.map((c) => ct.el("li", {}, callLink(c, true, sel)))));
    });
    return bar;
  });

  const exact = "^" + ct.quoteRE(f.name) + "$";
  ct.show(root, ct.selBanner(sel, "func", params),
    ct.el("h1", { id: "fn-name" }, f.name),
    ct.el("p", { class: "muted" }, f.location, " · ", ct.el("a", { href: ct.href("flame", Object.assign({ q: exact }, sel)) }, "in the flame graph"),
      " · ", ct.el("a", { href: ct.href("tree", Object.assign({ F: exact }, sel)) }, "in the call tree")),
    ct.el("div", { class: "cards" },
      stat(ct.num(f.calls), "calls"), stat(ct.dur(f.total_ns), "total"), stat(ct.dur(f.self_ns), "self"),
      stat(ct.dur(f.mean_ns), "mean"), stat(ct.dur(f.p50_ns), "p50"), stat(ct.dur(f.p99_ns), "p99"), stat(ct.dur(f.max_ns), "max"),
      f.panics ? stat(ct.num(f.panics), "panics") : null,
      f.errors ? stat(ct.num(f.errors), `errors, ${ct.pct(f.errors, f.calls)} of calls`, "fn-errors-card") : null,
      o.has_cpu ? stat(ct.dur(f.cpu_ns || 0), "on CPU") : null,
      o.has_cpu ? stat(ct.dur(f.tracing_ns || 0), "tracing") : null,
      o.has_cpu ? stat(ct.dur(f.wait_ns || 0), "waiting") : null),
    f.waits && f.waits.length ? ct.el("p", {}, "Waits on: ", f.waits.map((w, i) => [i ? ", " : "", `${w.on} ${ct.dur(w.ns)}`])) : null,
    f.syscalls && f.syscalls.length ? ct.el("p", {}, "In system calls (on CPU): ", f.syscalls.map((w, i) => [i ? ", " : "", `${w.on} ${ct.dur(w.ns)}`])) : null,
    errorsSection(f, sel),
    ct.el("h2", {}, "Callers and callees"),
    ct.el("div", { class: "sandwich" },
      ct.el("div", {}, ct.el("div", { class: "muted" }, "called by"), edgeTable(f.callers, "fn-callers")),
      ct.el("div", { class: "me" }, f.name),
      ct.el("div", {}, ct.el("div", { class: "muted" }, "calls"), edgeTable(f.callees, "fn-callees"))),
    ct.el("h2", {}, "Durations"),
    ct.el("div", { class: "hist", id: "fn-hist" }, bars),
    hist.length ? ct.el("div", { class: "hist-axis" }, ct.el("span", {}, ct.dur(hist[0].lo_ns)), ct.el("span", {}, ct.dur(hist[hist.length - 1].hi_ns))) : null,
    callsBox,
    ct.el("h2", {}, `Every chain that reached ${f.name}`),
    ct.el("div", { id: "fn-chains" }, ct.renderChains(f.chains, f.more_chains || 0, sel)));
};
