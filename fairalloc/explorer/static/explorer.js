// fairalloc explorer: the page keeps the instance being edited; the server computes everything.
"use strict";

const ALPHAS = [0, 0.25, 0.5, 1, 2, 3, 5, 10, 20, "inf"];
const state = {
  case: null,              // {name, source, resources: [{name, capacity}], users: [{name, weight, demand: [..]}]}
  mechanisms: [],          // offered reference mechanisms that are ticked
  offered: [], dynamic: [],
  generation: 0,           // answers to an older edit are dropped
};
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const fmt = (v) => (v === null || v === undefined) ? "" : (typeof v === "number" ? String(Number(v.toFixed(4))) : String(v));

// -- talking to the server -------------------------------------------------------------------
async function api(path, body) {
  const response = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}
function showError(text) { const m = $("message"); m.textContent = text; m.hidden = false; }
function clearError() { $("message").hidden = true; $("message").textContent = ""; }

// An input's value as the server should see it: a number, 0 for an empty demand, or the raw
// text (so that the server names the field and what is wrong with it).
function value(text, emptyIsZero) {
  const t = String(text).trim();
  if (t === "") return emptyIsZero ? 0 : "";
  const v = Number(t);
  return Number.isFinite(v) ? v : t;
}
function payload() {
  const c = state.case;
  return {
    name: c.name,
    resources: c.resources.map((r) => ({name: r.name, capacity: r.capacity})),
    users: c.users.map((u) => ({name: u.name, weight: u.weight, max_tasks: u.max_tasks,
      demand: Object.fromEntries(c.resources.map((r, j) => [r.name, u.demand[j]]))})),
  };
}
function fromServer(form) {
  return {name: form.name, source: form.source, resources: form.resources,
    users: form.users.map((u) => ({name: u.name, weight: u.weight, max_tasks: u.max_tasks,
      demand: form.resources.map((r) => u.demand[r.name] || 0)}))};
}
function alpha() { return ALPHAS[Number($("alpha-slider").value)]; }
function request(extra) { return {case: payload(), alpha: alpha(), on: $("alpha-on").value, ...extra}; }

// -- the editor --------------------------------------------------------------------------------
function input(value, attrs, cls) {
  return `<input value="${esc(value ?? "")}" ${attrs} ${cls ? `class="${cls}"` : ""}>`;
}
function renderEditor() {
  const c = state.case;
  $("resources-table").tBodies[0].innerHTML = c.resources.map((r, j) => `<tr>
      <td>${input(r.name, `data-kind="resource-name" data-index="${j}" aria-label="resource ${j + 1} name"`, "name")}</td>
      <td>${input(r.capacity, `data-kind="capacity" data-index="${j}" aria-label="capacity of ${esc(r.name)}"`)}</td>
      <td><button type="button" data-remove-resource="${j}" title="remove">&times;</button></td></tr>`).join("");
  $("users-table").tHead.innerHTML = `<tr><th>user</th><th>weight</th>${
    c.resources.map((r) => `<th>${esc(r.name)}</th>`).join("")}<th></th></tr>`;
  $("users-table").tBodies[0].innerHTML = c.users.map((u, i) => `<tr>
      <td>${input(u.name, `data-kind="user-name" data-index="${i}" aria-label="user ${i + 1} name"`, "name")}</td>
      <td>${input(u.weight, `data-kind="weight" data-index="${i}" aria-label="weight of ${esc(u.name)}"`)}</td>
      ${c.resources.map((r, j) => `<td>${input(u.demand[j], `data-kind="demand" data-index="${i}" data-resource="${j}"
          aria-label="${esc(u.name)} demand of ${esc(r.name)}"`)}</td>`).join("")}
      <td><button type="button" data-remove-user="${i}" title="remove">&times;</button></td></tr>`).join("");
  $("case-source").textContent = c.source || "";
  renderProbeControls();
}
function readInput(el) {
  const c = state.case, i = Number(el.dataset.index);
  switch (el.dataset.kind) {
    case "resource-name": c.resources[i].name = el.value; return true;   // header changes too
    case "capacity": c.resources[i].capacity = value(el.value, false); return false;
    case "user-name": c.users[i].name = el.value; return false;
    case "weight": c.users[i].weight = value(el.value, false); return false;
    case "demand": c.users[i].demand[Number(el.dataset.resource)] = value(el.value, true); return false;
  }
  return false;
}

let timer = null;
function editSoon() { clearTimeout(timer); timer = setTimeout(refresh, 250); }

// -- what the page shows -------------------------------------------------------------------------
async function refresh() {
  const generation = ++state.generation;
  const current = () => generation === state.generation;
  let solved;
  try {
    solved = await api("/api/solve", request({mechanisms: state.mechanisms}));
  } catch (e) {
    if (current()) { showError(e.message); $("numbers").dataset.state = "error"; $("results").classList.add("stale"); }
    return;
  }
  if (!current()) return;
  clearError();
  $("results").classList.remove("stale");
  renderNumbers(solved.results);
  $("chart").innerHTML = solved.chart;
  renderBadgeChoices(solved.results.map((r) => r.mechanism));
  renderProbeControls(solved.results.map((r) => r.mechanism));
  await Promise.all([refreshBadges(generation), refreshFrontier(generation), refreshProbe(generation),
                     refreshPlayback(generation)]);
}

function renderNumbers(results) {
  const users = state.case.users.map((u) => u.name);
  const head = `<tr><th>user</th>${results.map((r) => `<th colspan="2">${esc(r.mechanism)}</th>`).join("")}</tr>
    <tr><th></th>${results.map(() => "<th>tasks</th><th>dom. share</th>").join("")}</tr>`;
  const rows = users.map((u) => `<tr><td>${esc(u)}</td>${results.map((r) => `
      <td class="tasks" data-mech="${esc(r.mechanism)}" data-user="${esc(u)}" title="${esc(r.exact ? r.exact[u] : "")}">${fmt(r.tasks[u])}</td>
      <td class="share">${fmt(r.dominant_shares[u])}</td>`).join("")}</tr>`).join("");
  $("numbers").innerHTML = head + rows;
  $("numbers").dataset.state = "ready";
  const measure = (label, f) => `<tr><td>${label}</td>${results.map((r) => `<td>${f(r.measures)}</td>`).join("")}</tr>`;
  const resources = state.case.resources.map((r) => r.name);
  $("measures").innerHTML = `<tr><th>measure</th>${results.map((r) => `<th>${esc(r.mechanism)}</th>`).join("")}</tr>` +
    measure("sum of dominant shares", (m) => fmt(m.total_dominant_share)) +
    measure("total tasks", (m) => fmt(m.total_tasks)) +
    resources.map((r) => measure(`utilisation ${esc(r)}`, (m) => `${(100 * m.utilization[r]).toFixed(1)}%`)).join("") +
    measure("smallest weighted dom. share", (m) => fmt(m.min_dominant_share)) +
    measure("Jain's index", (m) => fmt(m.jain_index)) +
    measure("envious users", (m) => m.envious_users.length ? esc(m.envious_users.join(", ")) : "none");
}

function fillSelect(select, names, keep) {
  const previous = select.value;
  select.innerHTML = names.map((n) => `<option value="${esc(n)}">${esc(n)}</option>`).join("");
  if (keep && names.includes(previous)) select.value = previous;
}
function renderBadgeChoices(names) { fillSelect($("badge-mechanism"), names, true); }

async function refreshBadges(generation) {
  const mech = $("badge-mechanism").value;
  if (!mech) return;
  $("badges").innerHTML = '<span class="muted">checking properties...</span>';
  try {
    const report = await api("/api/properties", request({mechanism: mech}));
    if (generation !== state.generation) return;
    $("badges").innerHTML = report.properties.map((p) => {
      const cls = !p.applicable ? "na" : (p.holds ? "holds" : "violated");
      return `<span class="badge ${cls}" data-property="${esc(p.name)}" data-text="${esc(p.text)}">${esc(p.name.replaceAll("_", " "))}</span>`;
    }).join("");
    $("witness").hidden = true;
    const firstViolation = $("badges").querySelector(".badge.violated");
    if (firstViolation) showWitness(firstViolation);
  } catch (e) { if (generation === state.generation) $("badges").textContent = e.message; }
}
function showWitness(badge) {
  for (const b of $("badges").querySelectorAll(".badge")) b.classList.toggle("selected", b === badge);
  $("witness").textContent = `${badge.dataset.property.replaceAll("_", " ")}: ${badge.dataset.text}`;
  $("witness").hidden = false;
}

async function refreshFrontier(generation) {
  try {
    const f = await api("/api/frontier", request({}));
    if (generation === state.generation) $("frontier").innerHTML = f.svg;
  } catch (e) { if (generation === state.generation) $("frontier").textContent = e.message; }
}

// -- manipulation probe ----------------------------------------------------------------------------
function renderProbeControls(mechanisms) {
  if (mechanisms) fillSelect($("probe-mechanism"), mechanisms, true);
  const users = state.case.users.map((u) => u.name);
  const before = $("probe-user").value;
  fillSelect($("probe-user"), users, true);
  const i = Math.max(0, users.indexOf($("probe-user").value));
  const rows = $("probe-report");
  if (before !== $("probe-user").value || rows.dataset.resources !== state.case.resources.map((r) => r.name).join("\u0000")) {
    rows.dataset.resources = state.case.resources.map((r) => r.name).join("\u0000");
    rows.innerHTML = "<tr><th>resource</th><th>true</th><th>reported</th></tr>" + state.case.resources.map((r, j) =>
      `<tr><td>${esc(r.name)}</td><td>${fmt(state.case.users[i].demand[j])}</td><td>${input(state.case.users[i].demand[j],
        `data-report="${j}" aria-label="reported ${esc(r.name)}"`)}</td></tr>`).join("");
  }
}
function report() {
  return Object.fromEntries(state.case.resources.map((r, j) =>
    [r.name, value($("probe-report").querySelector(`[data-report="${j}"]`).value, true)]));
}
async function refreshProbe(generation, search) {
  if (!$("probe-mechanism").value || !$("probe-user").value) return;
  const out = $("probe-result");
  if (search) out.innerHTML = '<span class="muted">searching...</span>';
  try {
    const p = await api("/api/probe", request({mechanism: $("probe-mechanism").value, user: $("probe-user").value,
                                               report: report(), search: !!search}));
    if (generation !== undefined && generation !== state.generation) return;
    const gain = p.manipulated_tasks - p.truthful_tasks;
    let html = `<table class="numbers" id="probe-numbers">
      <tr><td>true tasks, truthful</td><td data-probe="truthful">${fmt(p.truthful_tasks)}</td></tr>
      <tr><td>true tasks, reporting this</td><td data-probe="reported">${fmt(p.manipulated_tasks)}</td></tr>
      <tr><td>gain</td><td data-probe="gain" class="${gain > 1e-9 ? "gain-positive" : "gain-none"}">${fmt(gain)}</td></tr></table>`;
    if (p.best) {
      const b = p.best;
      html += `<p id="probe-best">best lie found in ${b.evaluations} evaluations: report
        &lt;${Object.entries(b.reported_demand).map(([r, v]) => `${esc(r)} ${fmt(v)}`).join(", ")}&gt;
        gives ${fmt(b.manipulated_tasks)} true tasks (gain ${fmt(b.gain)})${b.gain > 1e-9 ? "" : ": no profitable lie found"}</p>`;
    }
    out.innerHTML = html;
  } catch (e) { out.textContent = e.message; }
}

// -- playback of dynamic mechanisms ----------------------------------------------------------------
let playback = null;
async function refreshPlayback(generation) {
  const mech = $("playback-mechanism").value;
  if (!mech) return;
  try {
    playback = await api("/api/playback", request({mechanism: mech}));
    if (generation !== state.generation) return;
    $("playback-step").max = playback.steps.length;
    $("playback-step").value = Math.min(Number($("playback-step").value) || 1, playback.steps.length);
    renderPlaybackStep();
  } catch (e) { $("playback-table").innerHTML = `<tr><td>${esc(e.message)}</td></tr>`; }
}
function renderPlaybackStep() {
  if (!playback) return;
  const step = playback.steps[Number($("playback-step").value) - 1];
  $("playback-label").textContent = `after arrival ${step.k} (${step.arrived})`;
  $("playback-table").innerHTML = "<tr><th>user</th><th>tasks</th></tr>" + Object.entries(step.tasks).map(([u, t]) =>
    `<tr><td>${esc(u)}</td><td data-playback-user="${esc(u)}">${fmt(t)}</td></tr>`).join("") +
    (step.M !== undefined ? `<tr><td>M (level)</td><td>${fmt(step.M)}</td></tr>` : "");
}

// -- wiring -------------------------------------------------------------------------------------
async function loadCase(name) {
  state.case = fromServer(name ? await api(`/api/case/${encodeURIComponent(name)}`) : await api("/api/start"));
  $("case-picker").value = state.case.name;
  renderEditor();
  await refresh();
}

function wire() {
  $("editor").addEventListener("input", (ev) => {
    if (ev.target.matches("#mechanism-boxes input")) return;
    if (ev.target.dataset.kind && readInput(ev.target)) {
      const pos = ev.target.selectionStart;       // keep typing in the renamed resource's box
      renderEditor();
      const again = document.querySelector(`[data-kind="resource-name"][data-index="${ev.target.dataset.index}"]`);
      again.focus(); again.setSelectionRange(pos, pos);
    }
    editSoon();
  });
  $("editor").addEventListener("click", (ev) => {
    const c = state.case;
    if (ev.target.dataset.removeResource !== undefined) {
      const j = Number(ev.target.dataset.removeResource);
      c.resources.splice(j, 1); c.users.forEach((u) => u.demand.splice(j, 1));
    } else if (ev.target.dataset.removeUser !== undefined) {
      c.users.splice(Number(ev.target.dataset.removeUser), 1);
    } else return;
    renderEditor(); refresh();
  });
  $("add-resource").onclick = () => {
    state.case.resources.push({name: `r${state.case.resources.length + 1}`, capacity: 10});
    state.case.users.forEach((u) => u.demand.push(0));
    renderEditor(); refresh();
  };
  $("add-user").onclick = () => {
    const names = new Set(state.case.users.map((u) => u.name));
    let k = state.case.users.length + 1;
    while (names.has(`user${k}`)) k++;
    state.case.users.push({name: `user${k}`, weight: 1, demand: state.case.resources.map(() => 1)});
    renderEditor(); refresh();
  };
  $("mechanism-boxes").addEventListener("change", () => {
    state.mechanisms = [...$("mechanism-boxes").querySelectorAll("input:checked")].map((b) => b.value);
    refresh();
  });
  $("alpha-slider").addEventListener("input", () => {
    $("alpha-value").textContent = alpha() === "inf" ? "\u221e" : alpha();
    editSoon();
  });
  $("alpha-on").onchange = refresh;
  $("badge-mechanism").onchange = () => refreshBadges(state.generation);
  $("badges").addEventListener("click", (ev) => { if (ev.target.classList.contains("badge")) showWitness(ev.target); });
  $("probe-user").onchange = () => { renderProbeControls(); refreshProbe(); };
  $("probe-mechanism").onchange = () => refreshProbe();
  $("probe-report").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => refreshProbe(), 250); });
  $("probe-search").onclick = () => refreshProbe(undefined, true);
  $("playback-mechanism").onchange = () => refreshPlayback(state.generation);
  $("playback-step").addEventListener("input", renderPlaybackStep);
  $("case-picker").onchange = () => loadCase($("case-picker").value).catch((e) => showError(e.message));
  $("download-yaml").onclick = async () => {
    const response = await fetch("/api/yaml", {method: "POST", headers: {"Content-Type": "application/json"},
                                               body: JSON.stringify({case: payload()})});
    if (!response.ok) { showError((await response.json()).error); return; }
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await response.blob());
    link.download = `${(state.case.name || "case").replace(/[^\w.-]+/g, "-")}.yaml`;
    link.click();
  };
}

async function main() {
  wire();
  const [cases, mechanisms] = await Promise.all([api("/api/cases"), api("/api/mechanisms")]);
  $("case-picker").innerHTML = cases.map((c) => `<option>${esc(c.name)}</option>`).join("");
  state.offered = mechanisms.static;
  state.dynamic = mechanisms.dynamic;
  state.mechanisms = ["drf", "asset", "ceei"];
  $("mechanism-boxes").innerHTML = state.offered.map((m) =>
    `<label><input type="checkbox" value="${esc(m)}" ${state.mechanisms.includes(m) ? "checked" : ""}> ${esc(m)}</label>`).join(" ");
  fillSelect($("playback-mechanism"), state.dynamic);
  if (state.dynamic.includes("ddrf")) $("playback-mechanism").value = "ddrf";   // needs no shared quantities
  const wanted = new URLSearchParams(location.search).get("case");
  await loadCase(wanted);
}
main().catch((e) => showError(e.message));
