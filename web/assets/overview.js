// The overview: what the trace holds, the findings, the top functions.
"use strict";

ct.views = ct.views || {};

ct.views.overview = async function (root) {
  const o = ct.overview;
  const card = (v, label) => ct.el("div", { class: "card" }, ct.el("b", {}, v), ct.el("span", {}, label));
  const rows = (fs) => fs.map((f) => {
    const r = [ct.dur(f.self), ct.dur(f.total), ct.num(f.calls), ct.dur(f.max)];
    if (o.hasCPU || o.hasWaits) r.push(ct.dur(f.cpu || 0), ct.dur(f.wait || 0));
    r.push(ct.funcLink(f.name));
    return r;
  });
  const head = ["self", "total", "calls", "max"].concat(o.hasCPU || o.hasWaits ? ["on CPU", "waiting"] : [], ["function"]);
  const linkify = (f) => {
    if (!f.function || !f.message.includes(f.function)) return f.message;
    const [a, ...b] = f.message.split(f.function);
    return [a, ct.funcLink(f.function), b.join(f.function)];
  };
  ct.show(root, 
    ct.el("h1", { id: "ov-program", title: o.program }, o.name || ct.baseName(o.file)),
    o.warning && ct.el("p", { class: "warning" }, o.warning),
    ct.el("div", { class: "cards", id: "ov-cards" },
      card(ct.dur(o.duration), "duration"),
      card(ct.num(o.goroutines), "goroutines"),
      card(ct.num(o.calls), "calls"),
      card(ct.num(o.dropped), "dropped calls"),
      card(ct.num(o.functions), "functions"),
      card(o.go || "?", "Go")),
    o.base && ct.el("p", { class: "muted" }, `Compared with ${ct.baseName(o.base)} in the flame graph.`),
    ct.el("h2", {}, "Findings"),
    o.findings.length
      ? ct.el("ol", { class: "findings", id: "ov-findings" }, o.findings.map((f) => ct.el("li", {}, linkify(f))))
      : ct.el("p", { class: "muted", id: "ov-findings" }, "No findings: nothing stands out by calltrail's rules."),
    ct.el("div", { class: "cols" },
      ct.el("div", {}, ct.el("h2", {}, "Top functions by self time"), ct.el("div", { id: "ov-self" }, ct.table(head, rows(o.topSelf)))),
      ct.el("div", {}, ct.el("h2", {}, "Top functions by total time"), ct.el("div", { id: "ov-total" }, ct.table(head, rows(o.topTotal))))),
    ct.el("p", { class: "muted" }, `Loaded ${ct.baseName(o.file)} in ${o.loadMillis} ms.`));
};
