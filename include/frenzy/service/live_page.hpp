#pragma once
// The live page of `frenzy serve` at `/`: one static HTML page with no data in it. Its script reads the JSON
// endpoints every 5 seconds (GET /v1/cluster, /v1/jobs, /v1/decisions, /metrics) and shows the inventory per GPU
// type (busy, free, down), the queue with each job's plan and why it waits, the running jobs with their Slurm ids,
// the recent decisions and the metrics. With a token the endpoints answer only requests that carry it, as for any
// client: the page sends it as "Authorization: Bearer" from the session's storage, where the reader puts it by
// opening /#token=TOKEN once (a URL fragment never reaches the server) or by typing it when asked. Everything it
// shows enters the page as text (textContent), never as markup.
#include <string_view>

namespace frenzy {

inline constexpr std::string_view live_page_html = R"html(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>frenzy serve</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222}
h1{font-size:1.4em;margin-bottom:.1em}h2{font-size:1.1em;margin-top:1.6em}#status{color:#555}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}.bar{display:flex;width:240px;height:14px;border:1px solid #999}.bar div{height:100%}
.busy{background:#d9534f}.free{background:#5cb85c}.down{background:#999}pre{background:#f7f7f7;padding:.6em;font-size:.8em}
#login{display:none;background:#fff3cd;padding:.6em;margin:.6em 0}
</style>
<script>window.frenzyErrors=[];window.addEventListener('error',function(e){window.frenzyErrors.push(String(e.message));});</script>
</head><body>
<h1>frenzy serve</h1><div id="status">loading...</div>
<div id="login">This service needs its token: <input id="token" type="password" size="40"> <button id="save">use it</button></div>
<h2>GPUs by type</h2><table id="inventory"><thead><tr><th>GPU type</th><th>GPUs</th><th>busy</th><th>free</th><th>down</th><th></th></tr></thead><tbody></tbody></table>
<h2>Queue</h2><table id="queue"><thead><tr><th>id</th><th>name</th><th>state</th><th>plan</th><th>why it waits</th><th>submitted</th></tr></thead><tbody></tbody></table>
<h2>Running</h2><table id="running"><thead><tr><th>id</th><th>name</th><th>state</th><th>Slurm job</th><th>plan</th><th>allocation</th><th>attempt</th></tr></thead><tbody></tbody></table>
<h2>Recent decisions</h2><table id="decisions"><thead><tr><th>time</th><th>decision</th><th>job</th><th>why</th></tr></thead><tbody></tbody></table>
<h2>Metrics</h2><pre id="metrics"></pre>
<script>
(function(){
var m=/[#&]token=([^&]+)/.exec(location.hash);
if(m){sessionStorage.setItem('frenzy-token',decodeURIComponent(m[1]));history.replaceState(null,'',location.pathname);}
document.getElementById('save').onclick=function(){sessionStorage.setItem('frenzy-token',document.getElementById('token').value);refresh();};
var refreshed=0;
function headers(){var t=sessionStorage.getItem('frenzy-token');return t?{'Authorization':'Bearer '+t}:{};}
function get(path,text){return fetch(path,{headers:headers()}).then(function(r){
  if(r.status===401){document.getElementById('login').style.display='block';throw new Error('the token is missing or wrong');}
  if(!r.ok&&r.status!==503)throw new Error(path+': HTTP '+r.status);
  return text?r.text():r.json();});}
function cell(tr,v){var td=document.createElement('td');td.textContent=v===undefined||v===null?'':String(v);tr.appendChild(td);return td;}
function fill(id,rows,cols){var tb=document.querySelector('#'+id+' tbody');tb.textContent='';
  rows.forEach(function(r){var tr=document.createElement('tr');cols.forEach(function(c){cell(tr,c(r));});tb.appendChild(tr);});}
function plan(j){if(!j.plan)return '';var p=j.plan,w=p.groups?p.groups.map(function(g){return g.gpus+' x '+g.gpu;}).join(' + '):p.gpus+' x '+p.gpu;return w+(p.parallel?' (dp'+p.parallel.dp+' tp'+p.parallel.tp+' pp'+p.parallel.pp+')':'');}
function when(t){return t?new Date(t*1000).toLocaleTimeString():'';}
function inventory(c){var tb=document.querySelector('#inventory tbody');tb.textContent='';
  (c.types||[]).forEach(function(t){var tr=document.createElement('tr');var busy=t.up-t.free,down=t.gpus-t.up;
    [t.gpu,t.gpus,busy,t.free,down].forEach(function(v){cell(tr,v);});
    var bar=document.createElement('div');bar.className='bar';
    [['busy',busy],['free',t.free],['down',down]].forEach(function(p){var d=document.createElement('div');d.className=p[0];
      d.style.width=(t.gpus>0?100*p[1]/t.gpus:0)+'%';d.title=p[0]+': '+p[1];bar.appendChild(d);});
    cell(tr,'').appendChild(bar);tb.appendChild(tr);});}
function refresh(){
  Promise.all([get('/v1/cluster'),get('/v1/jobs'),get('/v1/decisions'),get('/metrics',true)]).then(function(r){
    var jobs=r[1].jobs||[];
    if(r[0].error)document.getElementById('status').textContent='not ready: '+r[0].error;
    else inventory(r[0]);
    fill('queue',jobs.filter(function(j){return j.state==='queued';}),[function(j){return j.id;},function(j){return j.name;},
      function(j){return j.state;},plan,function(j){return j.reason||'waiting for GPUs of its plan';},function(j){return when(j.submit_time);}]);
    fill('running',jobs.filter(function(j){return j.state==='submitted'||j.state==='running';}),[function(j){return j.id;},
      function(j){return j.name;},function(j){return j.state;},function(j){return j.slurm_job_id;},plan,
      function(j){return j.allocation?JSON.stringify(j.allocation):'';},function(j){return j.attempt;}]);
    fill('decisions',(r[2].decisions||[]).slice(0,30),[function(d){return when(d.t);},function(d){return d.decision;},
      function(d){return d.job!==undefined?d.job:(d.name||d.node||'');},function(d){return d.why||d.state||'';}]);
    document.getElementById('metrics').textContent=r[3].split('\n').filter(function(l){return l&&l[0]!=='#';}).join('\n');
    if(!r[0].error)document.getElementById('status').textContent=jobs.length+' jobs; refreshed '+new Date().toLocaleTimeString()+(r[0].slurm_reachable===false?'; Slurm unreachable':'');
    document.body.dataset.refreshed=String(++refreshed);
  }).catch(function(e){document.getElementById('status').textContent='error: '+e.message;window.frenzyErrors.push(String(e));})
  .finally(function(){document.body.dataset.errors=String(window.frenzyErrors.length);});}
refresh();setInterval(refresh,5000);
})();
</script></body></html>
)html";

}  // namespace frenzy
