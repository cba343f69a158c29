// What the page shows of the server's answers: tables, and charts drawn in the browser by plotly.js.
"use strict";

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const $ = (id) => document.getElementById(id);
export const fmt = (v) => (v === null || v === undefined) ? "" : (typeof v === "number" ? String(Number(v.toFixed(4))) : String(v));
const pct = (v) => `${(100 * v).toFixed(1)}%`;
const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const CONFIG = {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"]};
const FONT = {family: "system-ui, sans-serif", size: 11};

// Plotly sizes a chart to its element's width and to the height given here (never to a blank box's).
export function plot(el, data, layout, height) {
  if (!window.Plotly) return Promise.resolve();   // the chart library is still loading: drawn at the next answer
  el.style.height = `${height}px`;
  const base = {font: FONT, margin: {l: 10, r: 10, t: 30, b: 10}, autosize: true, height, paper_bgcolor: "white"};
  return window.Plotly.react(el, data, {...base, ...layout}, CONFIG);
}

export function clearChart(el) {
  if (window.Plotly && el.data) window.Plotly.purge(el);
  el.innerHTML = "";
  el.style.height = "";
  delete el.dataset.hooked;   // purge dropped the chart's event handlers
}

// -- the allocation ---------------------------------------------------------------------------------------
export function renderNumbers(solved, queues) {
  const ok = solved.results.filter((r) => !r.error && !r.dynamic);
  const users = ok.length ? Object.keys(ok[0].tasks) : [];
  const unit = queues ? "of request" : "tasks";
  const head = `<tr><th>user</th>${solved.results.map((r) => `<th colspan="${r.error || r.dynamic ? 1 : 2}">${esc(r.mechanism)}</th>`).join("")}</tr>
    <tr><th></th>${solved.results.map((r) => (r.error || r.dynamic ? "<th></th>" : `<th>${unit}</th><th>dom. share</th>`)).join("")}</tr>`;
  const rows = users.map((u) => `<tr><td>${esc(u)}</td>${solved.results.map((r) => (r.error || r.dynamic)
    ? `<td class="na" title="${esc(r.error || "dynamic: see the playback")}">n/a</td>`
    : `<td class="tasks" data-mech="${esc(r.mechanism)}" data-user="${esc(u)}" title="${esc(r.exact ? r.exact[u] : "")}">${fmt(r.tasks[u])}</td>
       <td class="share" data-mech="${esc(r.mechanism)}" data-user="${esc(u)}">${fmt(r.dominant_shares[u])}</td>`).join("")}</tr>`).join("");
  $("numbers").innerHTML = head + rows;
  const notes = solved.results.filter((r) => r.error).map((r) => `<tr><td colspan="99" class="muted">${esc(r.mechanism)}: ${esc(r.error)}</td></tr>`);
  const measure = (label, f) => `<tr><td>${label}</td>${ok.map((r) => `<td>${f(r.measures)}</td>`).join("")}</tr>`;
  const resources = ok.length ? Object.keys(ok[0].measures.utilization) : [];
  $("measures").innerHTML = `<tr><th>measure</th>${ok.map((r) => `<th>${esc(r.mechanism)}</th>`).join("")}</tr>` +
    measure("sum of dominant shares", (m) => fmt(m.total_dominant_share)) +
    measure(queues ? "sum of fractions of requests" : "total tasks", (m) => fmt(m.total_tasks)) +
    resources.map((r) => measure(`utilisation ${esc(r)}`, (m) => pct(m.utilization[r]))).join("") +
    measure("smallest weighted dom. share", (m) => fmt(m.min_dominant_share)) +
    measure("Jain's index", (m) => fmt(m.jain_index)) +
    measure("envious users", (m) => (m.envious_users === null ? "not computed" : (m.envious_users.length ? esc(m.envious_users.join(", ")) : "none"))) +
    notes.join("");
}

// Figure 4 of the DRF paper, one chart per mechanism: each resource a bar of the users' shares of it.
export function renderCharts(solved, capacity) {
  const ok = solved.results.filter((r) => !r.error && !r.dynamic);
  const holder = $("charts");
  const wanted = ok.map((r) => r.mechanism);
  for (const el of [...holder.children]) if (!wanted.includes(el.dataset.mech)) { clearChart(el); el.remove(); }
  return Promise.all(ok.map((r) => {
    let el = [...holder.children].find((c) => c.dataset.mech === r.mechanism);
    if (!el) {
      el = document.createElement("div");
      el.className = "chart-box";
      el.dataset.mech = r.mechanism;
      holder.appendChild(el);
    }
    holder.appendChild(el);   // in the order of the results
    const users = Object.keys(r.bundles);
    const resources = Object.keys(capacity);
    const data = users.map((u, i) => ({
      type: "bar", name: u, x: resources, marker: {color: COLOURS[i % COLOURS.length]},
      y: resources.map((res) => (capacity[res] > 0 ? r.bundles[u][res] / capacity[res] : 0)),
      customdata: resources.map((res) => [r.bundles[u][res], r.units[res] || ""]),
      hovertemplate: `<b>${esc(u)}</b> %{x}: %{y:.1%} of capacity (%{customdata[0]:.4g} %{customdata[1]})<extra></extra>`,
    }));
    return plot(el, data, {
      barmode: "stack", title: {text: r.mechanism, font: {size: 12}}, showlegend: users.length <= 10,
      legend: {orientation: "h", y: -0.15}, yaxis: {range: [0, 1], tickformat: ".0%", automargin: true},
      xaxis: {automargin: true}, margin: {l: 10, r: 10, t: 30, b: 10},
    }, 260);
  }));
}

// -- properties ------------------------------------------------------------------------------------------------
export function renderBadges(report) {
  $("badges").innerHTML = report.properties.map((p, k) => {
    const cls = !p.applicable ? "na" : (p.holds ? "holds" : "violated");
    return `<button type="button" class="badge ${cls}" data-k="${k}" data-property="${esc(p.name)}">${esc(p.name.replaceAll("_", " "))}</button>`;
  }).join("");
}

export function renderWitness(p) {
  const w = $("witness");
  const label = p.name.replaceAll("_", " ");
  const verdict = !p.applicable ? "does not apply" : (p.holds ? "holds" : "fails");
  w.innerHTML = `<b>${esc(label)}</b> ${verdict}: ${esc(p.text)}` + (p.variant
    ? ` <button type="button" id="load-variant" class="small">load as variant '${esc(p.variant.name)}'</button>` : "");
  w.hidden = false;
}

// -- the frontier ---------------------------------------------------------------------------------------------
export function renderFrontier(answer, el) {
  const hover = (p) => `<b>${esc(p.label)}</b><br>sum of dominant shares ${fmt(p.total_dominant_share)}<br>` +
    `smallest dominant share ${fmt(p.min_dominant_share)}<br>` +
    Object.entries(p.tasks).slice(0, 12).map(([u, t]) => `${esc(u)}: ${fmt(t)} tasks`).join("<br>") +
    (Object.keys(p.tasks).length > 12 ? "<br>..." : "") + "<extra></extra>";
  const family = answer.points.filter((p) => p.alpha !== null);
  const others = answer.points.filter((p) => p.alpha === null);
  const current = family.filter((p) => p.current);
  const trace = (points, extra) => ({
    x: points.map((p) => p.total_dominant_share), y: points.map((p) => p.min_dominant_share),
    customdata: points.map((p) => p.label), hovertemplate: points.map(hover), ...extra,
  });
  const data = [
    trace(family, {type: "scatter", mode: "lines+markers+text", name: "alpha-fair", text: family.map((p) => p.label.replace("alpha=", "α=")),
      textposition: "top center", marker: {size: 8, color: "#1f77b4"}, line: {color: "#1f77b4"}}),
    ...others.map((p, i) => trace([p], {type: "scatter", mode: "markers", name: p.label,
      marker: {size: 11, symbol: ["square", "diamond", "triangle-up", "triangle-down"][i % 4], color: COLOURS[(i + 1) % 10],
        line: {color: "black", width: 1}}})),
    trace(current, {type: "scatter", mode: "markers", name: "current α", marker: {size: 18, symbol: "star", color: "gold",
      line: {color: "black", width: 1}}}),
  ];
  return plot(el, data, {
    xaxis: {title: {text: "efficiency: sum of shares"}, automargin: true},
    yaxis: {title: {text: "fairness: smallest share"}, automargin: true},
    legend: {orientation: "h", y: -0.25}, margin: {l: 10, r: 10, t: 10, b: 10}, hovermode: "closest",
  }, 360);
}

// -- playback ----------------------------------------------------------------------------------------------------
export function renderPlaybackChart(answer, k, el) {
  const ks = answer.steps.map((s) => s.k);
  const data = answer.users.map((u, i) => ({
    type: "scatter", mode: "lines+markers", name: u, line: {shape: "hv"}, marker: {color: COLOURS[i % COLOURS.length]},
    x: ks, y: answer.steps.map((s) => (u in s.dominant_shares ? s.dominant_shares[u] : null)),
    hovertemplate: `<b>${esc(u)}</b> after arrival %{x}: dominant share %{y:.4f}<extra></extra>`,
  }));
  return plot(el, data, {
    xaxis: {title: {text: "arrival"}, dtick: 1, automargin: true, range: [0.5, ks.length + 0.5]},
    yaxis: {title: {text: "dominant share"}, automargin: true, rangemode: "tozero"},
    shapes: [{type: "line", x0: k, x1: k, yref: "paper", y0: 0, y1: 1, line: {dash: "dot", color: "#555"}}],
    legend: {orientation: "h", y: -0.3}, margin: {l: 10, r: 10, t: 10, b: 10},
  }, 300);
}

export function renderPlaybackTable(answer, k) {
  const step = answer.steps[k - 1];
  $("playback-label").textContent = `after arrival ${step.k} of ${answer.steps.length} (${step.arrived} arrives)`;
  $("playback-table").innerHTML = "<tr><th>user</th><th>tasks</th><th>dominant share</th></tr>" +
    Object.keys(step.tasks).map((u) => `<tr><td>${esc(u)}</td><td data-playback-user="${esc(u)}">${fmt(step.tasks[u])}</td>
      <td>${fmt(step.dominant_shares[u])}</td></tr>`).join("") +
    (step.M !== undefined ? `<tr><td>level M</td><td colspan="2">${fmt(step.M)}</td></tr>` : "") +
    (step.binding ? `<tr><td>binding</td><td colspan="2">${esc(step.binding.join(", ") || "none")}</td></tr>` : "");
}

// -- the hierarchy ------------------------------------------------------------------------------------------------
export function renderTree(answer, el) {
  // one root (the cluster) above the top-level nodes; ids apart from names, which may be anything
  const nodes = [{name: "cluster", parent: null, root: true, weight: 1, entitled: 1,
    received: answer.nodes.filter((n) => n.parent === null).reduce((s, n) => s + n.received, 0)}, ...answer.nodes];
  const data = [{
    type: "treemap", branchvalues: "remainder",
    ids: nodes.map((n) => (n.root ? "root" : `n:${n.name}`)), labels: nodes.map((n) => n.name),
    parents: nodes.map((n) => (n.root ? "" : (n.parent === null ? "root" : `n:${n.parent}`))),
    values: nodes.map((n) => (n.user ? n.entitled : 0)),
    customdata: nodes.map((n) => [n.weight, n.entitled, n.received]),
    // what a node receives only when the mechanism could allocate the case
    texttemplate: "<b>%{label}</b><br>entitled %{customdata[1]:.1%}" + (answer.error ? "" : "<br>gets %{customdata[2]:.1%}"),
    hovertemplate: "<b>%{label}</b><br>weight %{customdata[0]:.4g}<br>entitled to %{customdata[1]:.2%} of the cluster" +
      (answer.error ? "" : "<br>receives a dominant share of %{customdata[2]:.2%}") + "<extra></extra>",
  }];
  return plot(el, data, {margin: {l: 4, r: 4, t: 4, b: 4}}, 360);
}
