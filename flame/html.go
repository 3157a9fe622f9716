package flame

import (
	"encoding/json"
	"html/template"
	"io"
)

// WriteHTML writes a self-contained page drawing root: click a box to
// zoom into it, search to highlight functions and see their share of the
// time, switch between flame and icicle. It needs no network.
func WriteHTML(w io.Writer, root *Frame, o Options) error {
	data, err := json.Marshal(root)
	if err != nil {
		return err
	}
	return page.Execute(w, struct {
		Title string
		Data  template.JS
		Diff  bool
	}{o.Title, template.JS(data), o.Diff})
}

var page = template.Must(template.New("flame").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:12px Verdana,sans-serif;margin:0;background:#f8f8f8}
header{display:flex;gap:12px;align-items:center;padding:8px 12px;background:#fff;border-bottom:1px solid #ddd}
header h1{font-size:14px;margin:0;flex:1}
#chart{position:relative;margin:8px 12px}
.f{position:absolute;height:16px;overflow:hidden;white-space:nowrap;border-radius:2px;box-sizing:border-box;border:1px solid #fff;padding:0 3px;line-height:14px;cursor:pointer}
.f.hit{outline:2px solid #a0f;z-index:1}
#info{padding:4px 12px;min-height:16px;color:#333}
</style></head><body>
<header><h1>{{.Title}}</h1>
<input id="search" placeholder="search (regexp)" size="30">
<span id="match"></span>
<label><input type="checkbox" id="icicle"> icicle</label>
<button id="reset">reset zoom</button></header>
<div id="info">click a box to zoom; hover for times</div>
<div id="chart"></div>
<script>
"use strict";
const root = {{.Data}};
const diff = {{.Diff}};
const chart = document.getElementById("chart");
const info = document.getElementById("info");
let focus = root, icicle = false, pattern = null;
function dur(ns){if(ns<1e3)return ns+"ns";if(ns<1e6)return (ns/1e3).toPrecision(3)+"µs";if(ns<1e9)return (ns/1e6).toPrecision(3)+"ms";return (ns/1e9).toPrecision(3)+"s"}
function size(f){return Math.max(f.v, f.b||0)}
function hue(f){
  if(diff){const b=f.b||0, ref=Math.max(f.v,b,1), ch=(f.v-b)/ref, l=Math.round(220-160*Math.min(1,Math.abs(ch)));
    if(f.v===b)return "rgb(220,220,220)"; return ch>0?"rgb(255,"+l+","+l+")":"rgb("+l+","+l+",255)"}
  let h=2166136261; for(const c of f.n){h^=c.charCodeAt(0);h=Math.imul(h,16777619)>>>0}
  return "rgb("+(205+h%50)+","+(80+(h>>>8)%130)+","+(40+(h>>>16)%40)+")"}
function depth(f){let d=0;for(const c of f.c||[])d=Math.max(d,depth(c));return d+1}
function parents(f,t,path){if(f===t)return path.concat([f]);for(const c of f.c||[]){const p=parents(c,t,path.concat([f]));if(p)return p}return null}
function draw(){
  chart.textContent="";
  const width=chart.clientWidth||1000, chain=parents(root,focus,[])||[root];
  const rows=depth(focus)+chain.length-1, total=size(focus);
  chart.style.height=(rows*17+4)+"px";
  let matched=0;
  const box=(f,x,w,level)=>{
    if(w<1)return;
    const d=document.createElement("div");d.className="f";
    d.style.left=x+"px";d.style.width=w+"px";
    d.style.top=(icicle?level*17:(rows-level-1)*17)+"px";
    d.style.background=hue(f);d.textContent=w>30?f.n:"";
    if(pattern&&pattern.test(f.n))d.classList.add("hit");
    let tip=f.n+": "+dur(f.v)+" ("+(100*f.v/Math.max(size(root),1)).toFixed(2)+"% of all)";
    if(diff)tip+=", base "+dur(f.b||0);
    d.title=tip;d.onmouseenter=()=>{info.textContent=tip};
    d.onclick=(e)=>{e.stopPropagation();focus=f;draw()};
    chart.appendChild(d);
    let cx=x;
    for(const c of f.c||[]){const cw=w*size(c)/Math.max(size(f),1);box(c,cx,cw,level+1);cx+=cw}
  };
  chain.slice(0,-1).forEach((f,i)=>box({n:f.n,v:f.v,b:f.b},0,width,i));
  box(focus,0,width,chain.length-1);
  if(pattern){
    const sum=(f,inside)=>{const hit=!inside&&pattern.test(f.n);let t=hit?f.v:0;for(const c of f.c||[])t+=sum(c,inside||hit);return t};
    matched=sum(root,false);
    document.getElementById("match").textContent="matched "+(100*matched/Math.max(root.v,1)).toFixed(2)+"% ("+dur(matched)+")";
  } else document.getElementById("match").textContent="";
}
document.getElementById("search").oninput=(e)=>{try{pattern=e.target.value?new RegExp(e.target.value):null}catch(_){pattern=null}draw()};
document.getElementById("icicle").onchange=(e)=>{icicle=e.target.checked;draw()};
document.getElementById("reset").onclick=()=>{focus=root;draw()};
window.onresize=draw;
draw();
</script></body></html>
`))
