// The call tree: calltrail replay's view, goroutine by goroutine, each
// call expanded on demand, with the command line's filters. Narrowed to
// some requests (trace-id, span), it holds their calls alone: the
// Requests view shows it so, embedded, the goroutine opts.open open.
"use strict";

ct.views = ct.views || {};

ct.views.tree = async function (root, params, opts) {
  const embedded = !!(opts && opts.embedded);
  const keys = ["g", "F", "N", "D", "t", "window"];
  const sel = ct.selection(params);
  const filters = Object.assign({}, sel);
  for (const k of keys) if (params.get(k)) filters[k] = params.get(k);
  const input = (k, label, ph, wide) => ct.el("label", {}, label + " ", ct.el("input", { name: k, value: filters[k] || "", placeholder: ph, class: wide ? "wide" : "" }));
  const form = ct.el("form", { class: "toolbar filters", id: "tree-filters" },
    input("g", "goroutine", "all"), input("F", "focus", "regexp", true), input("N", "hide", "regexp", true),
    input("D", "depth", "no limit"), input("t", "at least", "e.g. 1ms"), input("window", "window", "e.g. 1s-2.5s"),
    ct.el("button", { type: "submit" }, "Apply"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = Object.assign({}, sel);
    for (const k of keys) p[k] = form.elements[k].value.trim();
    location.hash = ct.href("tree", p);
  });
  const list = ct.el("ul", {});
  const err = ct.el("p", { class: "error", id: "tree-error" });
  ct.show(root, embedded ? null : ct.selBanner(sel, "tree", params), form, err, ct.el("div", { class: "tree", id: "tree" }, list));

  const fetchRows = async (extra) => {
    try {
      err.textContent = "";
      return await ct.api("tree", Object.assign({}, filters, extra));
    } catch (e) {
      err.textContent = e.message;
      return null;
    }
  };
  const moreItem = (into, load) => {
    const li = ct.el("li", {}, ct.el("span", { class: "more" }, "more…"));
    li.addEventListener("click", async () => { li.remove(); await load(into); });
    into.append(li);
  };
  // expandable makes a row that loads its children the first time it opens.
  const expandable = (label, kids, loadKids) => {
    const sub = ct.el("ul", { hidden: true });
    const toggle = ct.el("span", { class: "toggle" }, kids ? "▸" : " ");
    const li = ct.el("li", {}, ct.el("div", { class: "row" }, toggle, label), sub);
    let loaded = false;
    li.open = async () => {
      if (!kids) return;
      if (!loaded) { loaded = true; await loadKids(sub); }
      sub.hidden = !sub.hidden;
      toggle.textContent = sub.hidden ? "▸" : "▾";
    };
    toggle.addEventListener("click", li.open);
    return li;
  };
  const calls = (g, call) => async function load(into, after) {
    const r = await fetchRows({ in: g, call: call ?? "", after: after || "" });
    if (!r) return;
    if (!r.rows.length && !after) into.append(ct.el("li", { class: "muted" }, "no calls shown by these filters"));
    for (const c of r.rows) {
      const nm = ct.names[c.func] || "?";
      into.append(expandable([
        ct.callSig(nm, c, sel), ct.el("span", { class: "dur" }, ct.dur(c.duration_ns)),
        c.exit ? ct.el("span", { class: "exit" }, "(" + c.exit + ")") : "",
        c.held_ns ? ct.el("span", { class: "exit", title: "left out of its duration" }, `(held up ${ct.dur(c.held_ns)} by the trace writer)`) : "",
        c.error ? ct.el("span", { class: "exit" }, ct.errText(c.error)) : "",
        ct.el("a", { href: ct.timelineHref(g, c.start_ns, c.duration_ns + (c.held_ns || 0), sel), class: "dur", title: "open in the timeline" }, "at " + ct.dur(c.start_ns)),
      ], c.kids, calls(g, c.call)));
    }
    if (r.more >= 0) moreItem(into, (el) => load(el, r.more));
  };
  const goroutines = async (into, after) => {
    const r = await fetchRows({ after: after || "" });
    if (!r) return;
    for (const g of r.goroutines || []) {
      into.append(Object.assign(expandable([ct.el("b", {}, `g${g.g}`), g.parent ? ct.el("span", { class: "dur" }, `started by g${g.parent}`) : "", ct.el("span", { class: "dur" }, `${ct.num(g.calls)} calls`)], true, (el) => calls(g.g)(el)), { g: g.g }));
    }
    if (r.more >= 0) moreItem(into, (el) => goroutines(el, r.more));
  };
  await goroutines(list);
  // One goroutine, or the one asked for: open it.
  const rows = Array.from(list.children);
  const first = opts && opts.open ? rows.find((li) => li.g === opts.open) : rows.length === 1 ? rows[0] : null;
  if (first && first.open) await first.open();
};
