package web

import (
	"encoding/json"
	"html/template"
	"io"
	"net/url"

	"github.com/calltrail/calltrail/query"
)

// FlamePage says what WritePage draws.
type FlamePage struct {
	Title    string
	Inverted bool         // start with the inverted graph of self time
	Weight   query.Weight // wall time, or time on or off CPU
	Icicle   bool         // start with the root at the top
}

// WriteFlamePage writes a self-contained HTML page drawing t's flame graph
// with the web UI's own drawing code, offline: click to zoom, search,
// switch between total and self time and to icicle, and colours against
// base when it is not nil. It holds the graphs of wall time, and of the
// weight asked for, by total and by self time.
func WriteFlamePage(w io.Writer, t, base *query.Trace, o FlamePage) error {
	graphs := map[string]*query.Tree{}
	weights := []query.Weight{query.Wall}
	if o.Weight != query.Wall && o.Weight != "" {
		weights = append(weights, o.Weight)
	}
	for _, wt := range weights {
		for _, inv := range []bool{false, true} {
			mode := "total"
			if inv {
				mode = "self"
			}
			graphs[mode+"/"+string(wt)] = t.Flame(base, inv, wt)
		}
	}
	data, err := json.Marshal(graphs)
	if err != nil {
		return err
	}
	ov := map[string]any{"weights": []query.Weight{}} // the page holds one weight's graphs
	if o.Weight == query.OnCPU || o.Weight == query.OffCPU {
		ov["weights"] = []query.Weight{o.Weight}
	}
	if base != nil {
		ov["base"] = base.Name
	}
	if n := t.FailedCalls(); n > 0 {
		ov["errors"] = n // the page offers to colour boxes by errors
	}
	ovJSON, err := json.Marshal(ov)
	if err != nil {
		return err
	}
	params := url.Values{}
	if o.Inverted {
		params.Set("mode", "self")
	}
	if o.Weight != query.Wall && o.Weight != "" {
		params.Set("weight", string(o.Weight))
	}
	if o.Icicle {
		params.Set("icicle", "1")
	}
	var code [3]string
	for i, name := range []string{"app.css", "util.js", "flame.js"} {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return err
		}
		code[i] = string(b)
	}
	return flamePage.Execute(w, struct {
		Title            string
		CSS              template.CSS
		Util, Flame      template.JS
		Graphs, Overview template.JS
		Params           string
	}{o.Title, template.CSS(code[0]), template.JS(code[1]), template.JS(code[2]), template.JS(data), template.JS(ovJSON), params.Encode()})
}

var flamePage = template.Must(template.New("flame").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header><span class="brand">calltrail</span> <span id="file">{{.Title}}</span></header>
<main id="view"></main>
<script>{{.Util}}</script>
<script>{{.Flame}}</script>
<script>
"use strict";
ct.standalone = true;
ct.onCleanup = () => true;
ct.overview = {{.Overview}};
ct.flames = {};
for (const [k, t] of Object.entries({{.Graphs}})) ct.flames[k] = ct.flameFromTree(t);
(async () => {
  const box = ct.el("div", { id: "view-flame" });
  document.getElementById("view").append(box);
  await ct.views.flame(box, new URLSearchParams({{.Params}}));
  box.dataset.ready = "1";
})();
</script>
</body>
</html>
`))
