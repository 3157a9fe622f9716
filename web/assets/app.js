// The page: loads what every view needs, then shows the view the URL's
// hash names (#overview, #flame, #func?name=…, #timeline, #tree,
// #requests), so that every view can be linked to.
"use strict";

(async function () {
  const view = document.getElementById("view");
  try {
    const [o, names] = await Promise.all([ct.api("overview"), ct.api("names")]);
    ct.overview = o;
    ct.names = names;
  } catch (e) {
    view.replaceChildren(ct.el("p", { class: "error" }, "Cannot load the trace: " + e.message));
    return;
  }
  // Requests are a trace's OpenTelemetry spans: most traces have none.
  document.getElementById("nav-requests").hidden = !ct.overview.requests;
  const file = document.getElementById("file");
  file.textContent = ct.baseName(ct.overview.file) + (ct.overview.base ? " vs " + ct.baseName(ct.overview.base) : "");
  file.title = ct.overview.file + (ct.overview.base ? " against " + ct.overview.base : "");
  const dl = document.getElementById("func-names");
  const seen = new Set();
  for (const n of ct.names) if (n && !seen.has(n)) { seen.add(n); dl.append(ct.el("option", { value: n })); }
  document.getElementById("goto").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const v = document.getElementById("goto-func").value.trim();
    if (v) location.hash = ct.href("func", { name: v });
  });

  // onCleanup registers what undoes a view's window listeners when the
  // view is left. A view whose data came after the user had moved on is
  // undone at once: it returns false, and the view stops.
  ct.onCleanup = function (box, fn) {
    if (!box.isConnected) { fn(); return false; }
    const prev = ct.cleanup;
    ct.cleanup = prev ? () => { prev(); fn(); } : fn;
    return true;
  };

  let seq = 0;
  async function route() {
    const t0 = performance.now();
    const h = location.hash.slice(1);
    const [name, q] = h.split(/\?(.*)/s);
    const v = ct.views[name] ? name : "overview";
    document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("active", a.dataset.view === v));
    if (ct.cleanup) { ct.cleanup(); ct.cleanup = null; }
    const mine = ++seq;
    const box = ct.el("div", { id: "view-" + v });
    view.replaceChildren(box);
    document.title = "calltrail: " + v;
    try {
      await ct.views[v](box, new URLSearchParams(q || ""));
    } catch (e) {
      if (mine === seq) box.replaceChildren(ct.el("p", { class: "error", id: "view-error" }, e.message));
    }
    if (mine === seq) {
      box.dataset.ready = "1";
      ct.mark("view:" + v, performance.now() - t0);
    }
  }
  window.addEventListener("hashchange", route);
  await route();
  ct.firstDraw = performance.now();
})();
