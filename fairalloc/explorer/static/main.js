// fairalloc explorer: the page keeps the case being edited (its form); the server computes everything.
//
// Every edit starts a new round: the answers of the previous round are cancelled (never painted
// over the new one), every derived view is dimmed until its new answer arrives, the case is checked
// first, and an invalid case clears the views and shows its error next to the field that caused it.
"use strict";

import {getJSON, isCancelled, post, rounds} from "./api.js";
import * as E from "./editor.js";
import * as F from "./form.js";
import * as R from "./replay.js";
import * as V from "./views.js";

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const ALPHAS = [0, 0.25, 0.5, 1, 2, 3, 5, 10, 20, "inf"];
const MAX_TICKED = 7;   // fairalloc.core.limits.MAX_EXPLORER_MECHANISMS, the slider's member included
const DERIVED = ["allocation-panel", "properties-panel", "frontier-panel", "playback-panel", "tree-panel", "probe-result"];
const PROBE_VARIANT = "(probe report)";

const state = {
  form: null,                 // the case being edited (fairalloc/explorer/form.py)
  origin: "",                 // the picker's value the form was opened from
  opened: {},                 // picker value -> form, for files given on the command line or uploaded
  edited: false,
  meta: null,                 // {mechanisms: [...], units: [...]}
  ticked: [],
  check: null,                // the last check of the current round (valid cases only)
  round: 0,                   // the current round; answers of older rounds are dropped
  controller: null,           // aborts the requests of the round an edit overtook
  properties: null,
  probe: {user: null, report: null, touched: false, controller: null},
  playback: null,
  editStart: null,
};
// for tests and the latency benchmark: one entry per round that painted its allocation
window.explorer = {timings: [], state};

// -- the round of answers an edit starts ----------------------------------------------------------------
function scenario() {
  const name = $("scenario").value;
  return name && (state.form.variants || []).some((v) => v && v.name === name) ? name : null;
}
function alpha() { return ALPHAS[Number($("alpha-slider").value)]; }
function alphaMember() {
  const a = alpha();
  return `${$("alpha-on").value === "tasks" ? "alpha-tasks" : "alpha-fair"}:${a}`;
}
function base() { return {case: state.form, variant: scenario()}; }

// body[data-state] is "busy" while a round's requests run, "idle" after (tests wait for it)
function setBusy(delta) {
  const n = Math.max(0, Number(document.body.dataset.busy || 0) + delta);
  document.body.dataset.busy = String(n);
  document.body.dataset.state = n ? "busy" : "idle";
}

async function update() {
  const round = ++state.round;
  rounds.current = round;
  if (state.controller) state.controller.abort();
  const controller = state.controller = new AbortController();
  const signal = controller.signal;
  const current = () => round === state.round;
  for (const id of DERIVED) $(id).classList.add("pending");
  $("probe-best").innerHTML = "";        // a lie found for the case before this edit
  document.body.dataset.round = String(round);
  setBusy(1);
  try {
    // one request checks the case and, if it is valid, solves it: its numbers are painted before
    // anything else is asked
    const sent = performance.now();
    const check = await post("/api/check", {...base(), solve: solveOptions()}, {signal});
    if (!current()) return;
    state.answered = {sent, received: performance.now()};
    if (!check.valid) { invalid(check.error); painted(round); return; }
    valid(check);
    const charts = await paintAllocation(check.solved, round);
    if (!current()) return;
    await Promise.all([
      charts,
      refreshProperties(round, signal),
      refreshFrontier(round, signal),
      refreshPlayback(round, signal),
      refreshTree(round, signal),
      refreshProbe(round, signal),
    ]);
  } catch (e) {
    if (!isCancelled(e) && current()) { showMessage(e.message); painted(round); }
  } finally {
    setBusy(-1);
    if (current()) document.body.dataset.settled = String(round);
  }
}

// body[data-painted] is the last round whose allocation (or whose error) is on the page
function painted(round) {
  if (round === state.round) document.body.dataset.painted = String(round);
}

function invalid(error) {
  state.check = null;
  showFieldError(error);
  V.clearChart($("frontier"));
  V.clearChart($("playback-chart"));
  V.clearChart($("tree"));
  for (const el of [...$("charts").children]) { V.clearChart(el); el.remove(); }
  for (const id of ["numbers", "measures", "playback-table"]) $(id).innerHTML = "";
  for (const id of ["properties-status", "frontier-status", "playback-status", "playback-label", "playback-note", "tree-note"]) {
    $(id).textContent = "";
  }
  for (const id of ["properties-progress", "frontier-progress", "probe-progress"]) $(id).hidden = true;
  state.playback = null;
  $("badges").innerHTML = '<span class="muted">fix the error above to see the properties</span>';
  $("witness").hidden = true;
  $("probe-result").innerHTML = "";
  $("allocation-status").textContent = "(no allocation: the case has an error)";
  $("download-yaml").disabled = true;
  for (const id of DERIVED) $(id).classList.remove("pending");
}

function valid(check) {
  state.check = check;
  clearErrors();
  $("download-yaml").disabled = false;
  const variants = ["", ...check.variants];
  fillSelect($("scenario"), variants, (v) => (v ? `variant ${v}` : "the case"), scenario() || "");
  $("tree-panel").hidden = !check.hierarchy;
  renderProbeControls();
  renderPlaybackChoices(check);
  R.casePolicy(check.policy);
}

// -- the allocation ------------------------------------------------------------------------------------------
const EXACT_UP_TO = 12;   // users: exact values (a tooltip) cost most of a solve on larger cases

function solveOptions() {
  return {mechanisms: state.ticked, alpha: alpha(), on: $("alpha-on").value, exact: state.form.users.length <= EXACT_UP_TO};
}

// The allocation's numbers, painted; returns the promise of its charts.
async function paintAllocation(solved, round) {
  const queues = state.check.queues;
  V.renderNumbers(solved, queues);
  $("numbers").dataset.round = String(round);
  $("allocation-status").textContent = state.check.variants.length && scenario() ? `(variant ${scenario()})` : "";
  $("allocation-panel").classList.remove("pending");
  painted(round);
  renderBadgeChoices(solved.results);
  const started = state.editStart;
  state.editStart = null;
  await nextPaint();
  const numbers = started === null ? null : performance.now() - started;
  return drawCharts(solved, round, started, numbers);
}

async function drawCharts(solved, round, started, numbers) {
  const capacity = Object.fromEntries(state.form.resources.map((r) => [r.name, Number(r.capacity)]));
  await V.renderCharts(solved, capacity);
  if (round !== state.round) return;
  await nextPaint();
  if (started === null) return;
  // sent, answered: when the page sent the edit's request and had its answer (ms after the event)
  const {sent, received} = state.answered;
  window.explorer.timings.push({round, sent: sent - started, answered: received - started, numbers,
    charts: performance.now() - started});
}

function nextPaint() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

// -- properties ----------------------------------------------------------------------------------------------
function staticChoices() {
  return [...state.ticked, alphaMember()];
}
// The properties are checked for the chosen mechanism; by default the first that could allocate.
function renderBadgeChoices(results) {
  const usable = results.filter((r) => !r.error && !r.dynamic).map((r) => r.mechanism);
  const chosen = $("badge-mechanism").value;
  fillSelect($("badge-mechanism"), staticChoices(), (n) => n, usable.includes(chosen) ? chosen : (usable[0] || chosen));
}

async function refreshProperties(round, signal) {
  const mechanism = $("badge-mechanism").value || state.ticked[0] || alphaMember();
  const bar = $("properties-progress");
  bar.hidden = false;
  bar.removeAttribute("value");
  $("properties-status").textContent = "checking...";
  try {
    const report = await post("/api/properties", {...base(), mechanism, budget: 150}, {signal, onProgress: (p) => {
      if (round !== state.round) return;
      bar.max = p.total || 1;
      bar.value = p.done;
      $("properties-status").textContent = p.what ? `checking ${p.what.replaceAll("_", " ")}...` : "checking...";
    }});
    if (round !== state.round) return;
    state.properties = report;
    V.renderBadges(report);
    $("witness").hidden = true;
    const first = report.properties.findIndex((p) => p.applicable && !p.holds);
    if (first >= 0) showWitness(first);
    $("properties-status").textContent = `${mechanism}${scenario() ? ` on variant ${scenario()}` : ""}`;
  } catch (e) {
    if (isCancelled(e)) return;
    if (round === state.round) { $("badges").textContent = e.message; $("properties-status").textContent = ""; }
  } finally {
    if (round === state.round) { bar.hidden = true; $("properties-panel").classList.remove("pending"); }
  }
}

function showWitness(k) {
  for (const b of $("badges").querySelectorAll(".badge")) b.classList.toggle("selected", Number(b.dataset.k) === k);
  V.renderWitness(state.properties.properties[k]);
  const load = $("load-variant");
  if (load) load.onclick = () => loadVariant(state.properties.properties[k].variant);
}

// A witness that is a changed case (a lie, a user leaving, more capacity) becomes one of the case's
// variants, and the results are shown for it.
function loadVariant(variant) {
  const names = new Set((state.form.variants || []).map((v) => v && v.name));
  const named = {...F.copy(variant)};
  for (let k = 2; names.has(named.name); k++) named.name = `${variant.name}-${k}`;
  state.form.variants = [...(state.form.variants || []), named];
  fillSelect($("scenario"), ["", ...[...names].filter(Boolean), named.name], (v) => (v ? `variant ${v}` : "the case"), named.name);
  edited(true);
}

// -- the frontier -------------------------------------------------------------------------------------------
async function refreshFrontier(round, signal) {
  const bar = $("frontier-progress");
  bar.hidden = false;
  bar.removeAttribute("value");
  try {
    const answer = await post("/api/frontier", {...base(), alpha: alpha(), on: $("alpha-on").value}, {signal, onProgress: (p) => {
      if (round !== state.round) return;
      bar.max = p.total || 1;
      bar.value = p.done;
      $("frontier-status").textContent = `${p.what}...`;
    }});
    if (round !== state.round) return;
    const chart = $("frontier");
    await V.renderFrontier(answer, chart);
    if (chart.on && !chart.dataset.hooked) { chart.on("plotly_click", frontierClick); chart.dataset.hooked = "1"; }
    chart.dataset.round = String(round);
    $("frontier-status").textContent = `${answer.points.length} points`;
  } catch (e) {
    if (isCancelled(e)) return;
    if (round === state.round) { V.clearChart($("frontier")); $("frontier-status").textContent = e.message; }
  } finally {
    if (round === state.round) { bar.hidden = true; $("frontier-panel").classList.remove("pending"); }
  }
}

function frontierClick(event) {
  const label = event.points && event.points[0] && event.points[0].customdata;
  if (!label) return;
  if (label.startsWith("alpha=")) {
    const text = label.slice(6);
    const k = ALPHAS.findIndex((a) => String(a) === text);
    if (k < 0) return;
    $("alpha-slider").value = String(k);
    showAlpha();
  } else if (!state.ticked.includes(label)) {
    if (state.ticked.length >= MAX_TICKED) { showMessage(`untick a mechanism first (at most ${MAX_TICKED} at once)`); return; }
    state.ticked.push(label);
    renderMechanisms();
  }
  state.editStart = performance.now();
  update();
}

// -- playback ------------------------------------------------------------------------------------------------
function renderPlaybackChoices(check) {
  const select = $("playback-mechanism");
  const names = Object.keys(check.dynamic);
  const previous = select.value;
  select.innerHTML = names.map((n) => `<option value="${esc(n)}" ${check.dynamic[n] ? "disabled" : ""}>${esc(n)}${check.dynamic[n] ? " (not for this case)" : ""}</option>`).join("");
  const usable = names.filter((n) => !check.dynamic[n]);
  select.value = usable.includes(previous) ? previous : (usable.includes("dmfa-srq") ? "dmfa-srq" : (usable[0] || names[0] || ""));
  const reasons = names.filter((n) => check.dynamic[n]).map((n) => `${n}: ${check.dynamic[n]}`);
  $("playback-note").textContent = reasons.length ? `Not available here: ${reasons.join("; ")}` : "";
}

async function refreshPlayback(round, signal) {
  const name = $("playback-mechanism").value;
  const usable = state.check && state.check.dynamic && name && state.check.dynamic[name] === null;
  if (!usable) {                       // says why in the note; asks the server nothing it must refuse
    state.playback = null;
    V.clearChart($("playback-chart"));
    $("playback-table").innerHTML = "";
    $("playback-label").textContent = "";
    $("playback-panel").classList.remove("pending");
    return;
  }
  try {
    const answer = await post("/api/playback", {...base(), mechanism: name}, {signal});
    if (round !== state.round) return;
    state.playback = answer;
    const slider = $("playback-step");
    slider.max = String(answer.steps.length);
    slider.value = String(Math.min(Number(slider.value) || answer.steps.length, answer.steps.length));
    await renderPlaybackStep();
    $("playback-status").textContent = `${name}, ${answer.steps.length} arrivals`;
    $("playback-table").dataset.round = String(round);
  } catch (e) {
    if (isCancelled(e)) return;
    if (round === state.round) $("playback-note").textContent = e.message;
  } finally {
    if (round === state.round) $("playback-panel").classList.remove("pending");
  }
}

function renderPlaybackStep() {
  if (!state.playback) return Promise.resolve();
  const k = Number($("playback-step").value);
  V.renderPlaybackTable(state.playback, k);
  return V.renderPlaybackChart(state.playback, k, $("playback-chart"));
}

// -- the hierarchy -------------------------------------------------------------------------------------------
async function refreshTree(round, signal) {
  if (!state.check.hierarchy) { V.clearChart($("tree")); $("tree-panel").classList.remove("pending"); return; }
  const hierarchical = state.check.queues ? ["hdrf-fluid", "hdrf"] : ["hdrf", "hdrf-fluid"];
  const choices = [...new Set([...hierarchical, ...state.ticked])];
  fillSelect($("tree-mechanism"), choices, (n) => n, $("tree-mechanism").value || choices[0]);
  try {
    const answer = await post("/api/tree", {...base(), mechanism: $("tree-mechanism").value}, {signal});
    if (round !== state.round) return;
    $("tree-note").textContent = answer.error ? `${answer.mechanism} cannot allocate this case: ${answer.error}` : "";
    await V.renderTree(answer, $("tree"));
    $("tree").dataset.round = String(round);
  } catch (e) {
    if (!isCancelled(e) && round === state.round) $("tree").textContent = e.message;
  } finally {
    if (round === state.round) $("tree-panel").classList.remove("pending");
  }
}

// -- the manipulation probe ---------------------------------------------------------------------------------
function truth(user) {
  const row = state.form.users.find((u) => u.name === user) || {};
  const queue = F.isQueueForm(state.form);
  const demand = (queue ? row.request : row.demand) || {};
  return Object.fromEntries(state.form.resources.map((r) => [r.name, demand[r.name] ?? 0]));
}

function renderProbeControls() {
  fillSelect($("probe-mechanism"), staticChoices(), (n) => n, $("probe-mechanism").value || state.ticked[0]);
  const users = state.check ? state.check.users : state.form.users.map((u) => u.name);
  fillSelect($("probe-user"), users, (n) => n, users.includes(state.probe.user) ? state.probe.user : users[0]);
  const user = $("probe-user").value;
  const resources = state.form.resources.map((r) => r.name);
  const known = state.probe.report && resources.every((r) => r in state.probe.report) &&
    Object.keys(state.probe.report).length === resources.length;
  if (user !== state.probe.user || !known || !state.probe.touched) {
    state.probe = {...state.probe, user, report: truth(user), touched: false};
  }
  const real = truth(user);
  $("probe-report").innerHTML = `<tr><th>resource</th><th>true</th><th>reported</th></tr>` + resources.map((r, j) =>
    `<tr><td>${esc(r)}</td><td>${V.fmt(real[r])}</td><td><input type="text" inputmode="decimal" data-report="${j}"
      data-path="report.${esc(r)}" aria-label="reported ${esc(r)}" value="${esc(F.shown(state.probe.report[r]))}"></td></tr>`).join("");
}

function reportOf() {
  return Object.fromEntries(Object.entries(state.probe.report).filter(([, v]) => v !== null));
}

// The report is checked as a misreport variant of the case would be: its mistakes are named by the
// case validation, shown next to the box, and never sent to the probe.
async function probeReportError(signal) {
  const probeCase = {...state.form, variants: [...(state.form.variants || []),
    {name: PROBE_VARIANT, misreport: {user: $("probe-user").value, demand: reportOf()}}]};
  const check = await post("/api/check", {case: probeCase}, {signal});
  if (check.valid) return null;
  const k = (state.form.variants || []).length;
  const prefix = `variants[${k}].misreport.demand`;
  return check.error.startsWith(prefix) ? check.error.replace(prefix, "report") : check.error;
}

async function refreshProbe(round, signal, search = false) {
  const user = $("probe-user").value;
  const mechanism = $("probe-mechanism").value;
  const out = $("probe-result");
  const error = $("probe-error");
  if (!user || !mechanism) return;
  try {
    const problem = await probeReportError(signal);
    if (round !== state.round) return;
    markBox($("probe-report"), problem, error);
    if (problem) { out.innerHTML = ""; return; }
    const bar = $("probe-progress");
    if (search) { bar.hidden = false; bar.removeAttribute("value"); $("probe-best").innerHTML = '<span class="muted">searching...</span>'; }
    const body = {...base(), mechanism, user, report: reportOf(), search, budget: 300};
    const answer = await post("/api/probe", body, search ? {signal, onProgress: (p) => { bar.max = p.total || 1; bar.value = p.done; }} : {signal});
    if (round !== state.round) return;
    renderProbe(answer);
  } catch (e) {
    if (!isCancelled(e) && round === state.round) out.textContent = e.message;
  } finally {
    if (round === state.round) { $("probe-progress").hidden = true; out.classList.remove("pending"); }
  }
}

function renderProbe(p) {
  const gain = p.manipulated_tasks - p.truthful_tasks;
  $("probe-result").innerHTML = `<table class="numbers" id="probe-numbers">
    <tr><td>true tasks, truthful</td><td data-probe="truthful">${V.fmt(p.truthful_tasks)}</td></tr>
    <tr><td>true tasks, reporting this</td><td data-probe="reported">${V.fmt(p.manipulated_tasks)}</td></tr>
    <tr><td>gain</td><td data-probe="gain" class="${gain > 1e-9 ? "gain-positive" : "gain-none"}">${V.fmt(gain)}</td></tr></table>`;
  if (!p.best) return;
  const b = p.best;
  $("probe-best").innerHTML = `<p id="probe-best-text">${b.profitable ? esc(b.text) :
    `No profitable lie found for ${esc(p.user)} in ${b.evaluations} evaluations (a search, not a proof).`}</p>` +
    (b.variant ? `<button type="button" id="probe-load" class="small">load as variant '${esc(b.variant.name)}'</button>` : "");
  if (b.variant) $("probe-load").onclick = () => loadVariant(b.variant);
}

function probeRound(search) {
  if (state.probe.controller) state.probe.controller.abort();
  const controller = state.probe.controller = new AbortController();
  if (!state.check) return;
  $("probe-result").classList.add("pending");
  refreshProbe(state.round, controller.signal, search);
}

// -- errors -----------------------------------------------------------------------------------------------------
function showMessage(text) { $("message").textContent = text; $("message").hidden = false; }

function clearErrors() {
  $("message").hidden = true;
  for (const el of document.querySelectorAll("#case-panel .field-error")) el.hidden = true;
  for (const el of document.querySelectorAll("#case-panel [aria-invalid]")) el.removeAttribute("aria-invalid");
}

function showFieldError(message) {
  clearErrors();
  showMessage(message);
  const before = JSON.stringify([E.view.userField, E.view.groupField, [...E.view.columns]]);
  E.reveal(state.form, message);
  if (JSON.stringify([E.view.userField, E.view.groupField, [...E.view.columns]]) !== before) renderEditor();
  const box = E.boxOf(message);
  const holder = E.errorBoxFor(box, message);
  if (box) box.setAttribute("aria-invalid", "true");
  if (holder) {
    holder.textContent = message;
    holder.hidden = false;
    (box || holder).scrollIntoView({block: "nearest"});
  }
}

function markBox(table, problem, holder) {
  for (const el of table.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  holder.hidden = !problem;
  holder.textContent = problem || "";
  if (!problem) return;
  const path = problem.split(": ")[0];
  const box = table.querySelector(`[data-path="${CSS.escape(path)}"]`);
  if (box) { box.setAttribute("aria-invalid", "true"); box.scrollIntoView({block: "nearest"}); }
}

// -- mechanisms ------------------------------------------------------------------------------------------------
function renderMechanisms() {
  const list = state.meta.mechanisms.filter((m) => m.kind === "static" && !m.family);
  $("mechanism-list").innerHTML = list.map((m) => {
    const on = state.ticked.includes(m.name);
    const full = !on && state.ticked.length >= MAX_TICKED;
    return `<label class="mechanism"><input type="checkbox" value="${esc(m.name)}" ${on ? "checked" : ""} ${full ? "disabled" : ""}>
      <span class="lines"><b>${esc(m.name)}</b>: ${esc(m.summary)}<br>${esc(m.about)}${m.docs
        ? ` <a href="${esc(m.docs)}" target="_blank" rel="noopener">docs</a>` : ""}</span></label>`;
  }).join("") + `<p class="muted">Plus the alpha-fair family below; at most ${MAX_TICKED} ticked at once.</p>`;
}

function defaultTicks(form, check) {
  const names = state.meta.mechanisms.filter((m) => m.kind === "static" && !m.family).map((m) => m.name);
  const ticks = [];
  const policy = form.policy && names.includes(form.policy) ? form.policy : null;
  if (policy) ticks.push(policy);
  ticks.push("drf");
  if (form.groups && form.groups.length) ticks.push(F.isQueueForm(form) ? "hdrf-fluid" : "hdrf");
  if (!policy && !(form.groups && form.groups.length)) ticks.push("asset", "ceei");
  return [...new Set(ticks)].filter((n) => names.includes(n));
}

// -- cases ------------------------------------------------------------------------------------------------------
function renderEditor() {
  E.render(state.form, state.meta.units, state.meta.mechanisms.map((m) => m.name));
}

function open(form, origin) {
  state.form = form;
  state.origin = origin;
  state.edited = false;
  state.probe = {user: null, report: null, touched: false, controller: state.probe.controller};
  E.view.columns.clear();
  E.view.userField = F.isQueueForm(form) ? "request" : "demand";
  state.ticked = defaultTicks(form);
  $("case-picker").value = origin;
  $("scenario").innerHTML = '<option value="">the case</option>';
  $("playback-step").value = "1";
  $("badge-mechanism").innerHTML = "";
  renderMechanisms();
  renderEditor();
  renderCaseState();
  state.editStart = performance.now();
  return update();
}

function renderCaseState() {
  $("case-state").textContent = state.edited ? "edited" : "";
}

function edited(redraw) {
  state.edited = true;
  if (redraw) renderEditor();
  renderCaseState();
  return update();
}

// Cases are opened in the order they are picked: a case that arrives after a later pick is dropped.
let picks = 0;

async function pick(value) {
  const mine = ++picks;
  if (state.opened[value]) return open(F.copy(state.opened[value]), value);
  const answer = await getJSON(`/api/case/${encodeURIComponent(value)}`);
  return mine === picks ? open(answer.case, value) : undefined;
}

async function upload(file) {
  const mine = ++picks;
  const text = await file.text();
  const answer = await post("/api/upload", {text, filename: file.name});
  if (mine !== picks) return;
  if (!answer.valid) { showMessage(answer.error); return; }
  const value = `upload:${file.name}`;
  state.opened[value] = F.copy(answer.case);
  addPickerOption(value, `${file.name} (uploaded)`);
  await open(answer.case, value);
}

function addPickerOption(value, label) {
  const picker = $("case-picker");
  if ([...picker.options].some((o) => o.value === value)) return;
  const option = document.createElement("option");
  option.value = value;
  option.textContent = label;
  picker.insertBefore(option, picker.firstChild);
}

async function download() {
  if (!state.check) { showMessage("the case has an error: fix it to download the case"); return; }
  const response = await fetch("/api/yaml", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({case: state.form})});
  if (!response.ok) { showMessage((await response.json()).error); return; }
  const name = (response.headers.get("Content-Disposition") || "").match(/filename="([^"]+)"/);
  const link = document.createElement("a");
  link.href = URL.createObjectURL(await response.blob());
  link.download = name ? name[1] : "case.yaml";
  document.body.appendChild(link);
  link.click();
  link.remove();
}

// -- wiring -----------------------------------------------------------------------------------------------------
function fillSelect(select, values, label, wanted) {
  select.innerHTML = values.map((v) => `<option value="${esc(v)}">${esc(label(v))}</option>`).join("");
  if (values.includes(wanted)) select.value = wanted;
}

function showAlpha() {
  const a = alpha();
  $("alpha-value").textContent = a === "inf" ? "\u221e" : String(a);
}

function caught(handler) {    // an event handler's failure is a message in the page, never an uncaught error
  return (...args) => Promise.resolve().then(() => handler(...args)).catch((e) => { if (!isCancelled(e)) showMessage(e.message); });
}

function wire() {
  const panel = $("case-panel");
  panel.addEventListener("input", caught((ev) => {
    const el = ev.target;
    if (el.dataset.t === undefined) return undefined;
    state.editStart = performance.now();
    const redraw = E.apply(state.form, el);
    return redraw === null ? undefined : edited(redraw);
  }));
  panel.addEventListener("change", caught((ev) => {
    const el = ev.target;
    if (el.id === "explicit-arrivals") {
      state.form.arrivals = el.checked ? state.form.users.map((u) => u.name) : null;
      return edited(true);
    }
    if (el.dataset.column) {
      if (el.checked) E.view.columns.add(el.dataset.column); else E.view.columns.delete(el.dataset.column);
      renderEditor();
    }
    if (el.id === "user-field") { E.view.userField = el.value; renderEditor(); }
    if (el.id === "group-field") { E.view.groupField = el.value; renderEditor(); }
    return undefined;
  }));
  panel.addEventListener("click", caught((ev) => {
    const button = ev.target.closest("button");
    if (!button) return undefined;
    const i = Number(button.dataset.i);
    state.editStart = performance.now();
    if (button.dataset.remove) {
      ({resources: F.removeResource, users: F.removeUser, groups: F.removeGroup})[button.dataset.remove](state.form, i);
      return edited(true);
    }
    if (button.dataset.arrive) { E.moveArrival(state.form, i, Number(button.dataset.arrive)); return edited(true); }
    const add = {"add-resource": F.addResource, "add-user": F.addUser, "add-group": F.addGroup}[button.id];
    if (add) { add(state.form); return edited(true); }
    return undefined;
  }));
  $("mechanism-list").addEventListener("change", caught((ev) => {
    state.ticked = [...$("mechanism-list").querySelectorAll("input:checked")].map((b) => b.value);
    renderMechanisms();
    state.editStart = performance.now();
    return update();
  }));
  $("alpha-slider").addEventListener("input", caught(() => { showAlpha(); state.editStart = performance.now(); return update(); }));
  $("alpha-on").addEventListener("change", caught(() => update()));
  $("scenario").addEventListener("change", caught(() => update()));
  $("badge-mechanism").addEventListener("change", caught(() => {
    if (!state.check) return undefined;
    $("properties-panel").classList.add("pending");
    return refreshProperties(state.round, state.controller.signal);
  }));
  $("badges").addEventListener("click", (ev) => {
    const badge = ev.target.closest(".badge");
    if (badge) showWitness(Number(badge.dataset.k));
  });
  $("probe-user").addEventListener("change", () => { state.probe.touched = false; state.probe.user = null; renderProbeControls(); probeRound(false); });
  $("probe-mechanism").addEventListener("change", () => probeRound(false));
  $("probe-report").addEventListener("input", (ev) => {
    const j = ev.target.dataset.report;
    if (j === undefined) return;
    state.probe.report[state.form.resources[Number(j)].name] = F.parsed(ev.target.value);
    state.probe.touched = true;
    $("probe-best").innerHTML = "";
    probeRound(false);
  });
  $("probe-search").addEventListener("click", () => probeRound(true));
  $("playback-mechanism").addEventListener("change", caught(() => {
    $("playback-panel").classList.add("pending");
    return refreshPlayback(state.round, state.controller.signal);
  }));
  $("playback-step").addEventListener("input", caught(renderPlaybackStep));
  $("tree-mechanism").addEventListener("change", caught(() => refreshTree(state.round, state.controller.signal)));
  $("case-picker").addEventListener("change", caught(() => pick($("case-picker").value)));
  $("upload").addEventListener("change", caught(() => { const f = $("upload").files[0]; $("upload").value = ""; return f ? upload(f) : undefined; }));
  $("download-yaml").addEventListener("click", caught(download));
}

async function main() {
  wire();
  const [meta, cases, start] = await Promise.all([getJSON("/api/meta"), getJSON("/api/cases"), getJSON("/api/start")]);
  state.meta = meta;
  R.initReplay(start.workload, base);
  $("case-picker").innerHTML = cases.cases.map((c) => `<option value="${esc(c)}">${esc(c)}</option>`).join("");
  const wanted = new URLSearchParams(location.search).get("case");
  if (wanted && cases.cases.includes(wanted)) return pick(wanted);
  if (start.origin === "file") {
    const value = `file:${start.label}`;
    state.opened[value] = F.copy(start.case);
    addPickerOption(value, `${start.label} (file)`);
    return open(start.case, value);
  }
  return open(start.case, start.label);
}

main().catch((e) => showMessage(e.message));
