// The Replay panel (explore CASE --workload W): the workload replayed against the case being edited,
// under the scheduler picked, on Run. The figures are the server's (fairalloc/scheduling/replay_plotly.py,
// the ones 'simulate --report' draws), drawn as given; the table is the replay's per-queue statistics.
"use strict";

import {isCancelled, post} from "./api.js";
import {clearChart, fmt} from "./views.js";

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const KINDS = ["stacked", "usage", "waits", "preemptions"];
const HEIGHT = 360;
// the per-queue table: the replay's statistics (seconds, as the run counts them)
const COLUMNS = [
  ["submitted", "submitted"], ["completed", "completed"], ["wait_mean", "wait mean (s)"],
  ["wait_p95", "wait p95 (s)"], ["preemptions", "preemptions"], ["lost_job_seconds", "job-s lost"],
];

const replay = {workload: null, body: null, touched: false, controller: null};

// Shown only with a workload: ``workload`` is /api/start's ({name, form, jobs, schedulers}); ``body()``
// the request's case and variant as the page holds them now.
export function initReplay(workload, body) {
  if (!workload) return;
  replay.workload = workload;
  replay.body = body;
  $("replay-panel").hidden = false;
  $("replay-about").textContent = `Workload ${workload.name}: ${workload.jobs} jobs, replayed against the case as edited.`;
  $("replay-scheduler").innerHTML = workload.schedulers.map((n) => `<option value="${esc(n)}">${esc(n)}</option>`).join("");
  $("replay-scheduler").addEventListener("change", () => { replay.touched = true; });
  $("replay-run").addEventListener("click", () => run().catch((e) => { $("replay-status").textContent = e.message; }));
}

// The case's policy is the default scheduler, until one is picked.
export function casePolicy(policy) {
  if (!replay.workload || replay.touched) return;
  const wanted = policy && replay.workload.schedulers.includes(policy) ? policy : "drf";
  $("replay-scheduler").value = wanted;
}

async function run() {
  if (replay.controller) replay.controller.abort();
  const controller = replay.controller = new AbortController();
  const scheduler = $("replay-scheduler").value;
  const bar = $("replay-progress");
  const panel = $("replay-panel");
  bar.hidden = false;
  bar.removeAttribute("value");
  panel.dataset.state = "busy";
  $("replay-status").textContent = `${scheduler}: replaying...`;
  const request = {...replay.body(), workload: replay.workload.form, workload_name: replay.workload.name, scheduler};
  try {
    const answer = await post("/api/replay", request, {signal: controller.signal, onProgress: (p) => {
      bar.max = p.total || 1;
      bar.value = p.done;
    }});
    if (controller !== replay.controller) return;
    renderTable(answer.charts.table);
    await Promise.all(KINDS.map((kind) => draw($(`replay-${kind}`), answer.figures[kind])));
    const c = answer.charts;
    const n = c.preemptions.length;
    $("replay-status").textContent = `${answer.scheduler} on ${c.workload}: ${n} preemption${n === 1 ? "" : "s"}, ended at ${fmt(c.end)} ${c.unit}`;
    panel.dataset.state = "done";
  } catch (e) {
    if (isCancelled(e) || controller !== replay.controller) return;
    clear();
    $("replay-status").textContent = e.message;
    panel.dataset.state = "error";
  } finally {
    if (controller === replay.controller) bar.hidden = true;
  }
}

// The legend sits below the plot: its rows (about one entry per 130 px of width) add to the height,
// so that on a phone a legend of many queues is not cut off.
function draw(el, figure) {
  if (!window.Plotly) return Promise.resolve();
  const rows = figure.layout.legend ? Math.ceil(figure.data.length / Math.max(1, Math.floor(el.clientWidth / 130))) : 0;
  const height = HEIGHT + 22 * rows;
  el.style.height = `${height}px`;
  return window.Plotly.react(el, figure.data, {...figure.layout, height, autosize: true}, figure.config);
}

function renderTable(table) {
  const head = `<tr><th>queue</th>${COLUMNS.map(([, label]) => `<th>${esc(label)}</th>`).join("")}</tr>`;
  const rows = Object.entries(table).map(([q, row]) =>
    `<tr><td>${esc(q)}</td>${COLUMNS.map(([key]) => `<td>${row[key] === null ? "-" : fmt(row[key])}</td>`).join("")}</tr>`);
  $("replay-table").innerHTML = head + rows.join("");
}

function clear() {
  $("replay-table").innerHTML = "";
  for (const kind of KINDS) clearChart($(`replay-${kind}`));
}
