// The case editor: every field of the form as a box, and each box's edit applied to the form.
// Every box carries data-path, the field's name in the server's messages, so that an error is
// shown next to the box that caused it.
"use strict";

import * as F from "./form.js";

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const $ = (id) => document.getElementById(id);
const LABELS = {demand: "demand per task", request: "request", usage: "usage", weight: "weight",
  guarantee: "guarantee", limit: "limit", deserved: "deserved", borrowing_limit: "borrowing limit", lending_limit: "lending limit",
  user_expectation: "expectation", group: "group", max_tasks: "max tasks", shared: "shared", priority: "priority",
  parent: "parent"};

export const view = {userField: "demand", groupField: "guarantee", columns: new Set()};

function box(value, attrs, cls = "", blank = "") {
  const hint = blank ? ` placeholder="${esc(blank)}"` : "";
  return `<input type="text" inputmode="decimal" value="${esc(F.shown(value))}" ${attrs}${cls ? ` class="${cls}"` : ""}${hint}>`;
}
function attrs(o) {
  return Object.entries(o).map(([k, v]) => `data-${k}="${esc(v)}"`).join(" ");
}

// -- rendering ------------------------------------------------------------------------------------
export function render(form, units, mechanisms) {
  const focus = rememberFocus();
  renderCaseFields(form, mechanisms);
  renderResources(form, units);
  renderUsers(form);
  renderGroups(form);
  renderExtras(form);
  restoreFocus(focus);
}

function renderCaseFields(form, mechanisms) {
  const text = (key, label, area) => `<label for="case-${key}">${label}</label>` + (area
    ? `<textarea id="case-${key}" rows="2" ${attrs({t: "case", f: key, path: key})}>${esc(F.shown(form[key]))}</textarea>`
    : `<input id="case-${key}" type="text" value="${esc(F.shown(form[key]))}" ${attrs({t: "case", f: key, path: key})}${key === "policy" ? ' list="mechanism-names"' : key === "demand" ? ' list="demand-readings"' : ""}>`);
  $("case-fields").innerHTML = text("name", "name") + text("policy", "policy") + text("demand", "demand") +
    text("source", "source", true) +
    text("description", "description", true) +
    `<span>arrivals</span><label class="inline"><input type="checkbox" id="explicit-arrivals" ${form.arrivals ? "checked" : ""}>
      explicit arrival order (else the users' order)</label>` +
    `<datalist id="mechanism-names">${mechanisms.map((m) => `<option value="${esc(m)}">`).join("")}</datalist>` +
    `<datalist id="demand-readings"><option value="observed"><option value="backlogged"></datalist>`;
}

function renderResources(form, units) {
  const unitOptions = (unit) => ["", ...units].map((u) => `<option value="${esc(u)}" ${u === (unit || "") ? "selected" : ""}>${esc(u || "-")}</option>`).join("");
  $("resources-table").innerHTML = `<thead><tr><th>resource</th><th>capacity</th><th>unit</th><th></th></tr></thead><tbody>` +
    form.resources.map((r, j) => `<tr>
      <td>${box(r.name, attrs({t: "resources", i: j, f: "name", path: F.paths.resourceName(j)}) + ` aria-label="resource ${j + 1} name"`, "name")}</td>
      <td>${box(r.capacity, attrs({t: "resources", i: j, f: "capacity", path: F.paths.capacity(r.name)}) + ` aria-label="capacity of ${esc(r.name)}"`)}</td>
      <td><select ${attrs({t: "resources", i: j, f: "unit", path: F.paths.unit(r.name)})} aria-label="unit of ${esc(r.name)}">${unitOptions(r.unit)}</select></td>
      <td><button type="button" data-remove="resources" data-i="${j}" title="remove ${esc(r.name)}" aria-label="remove resource ${esc(r.name)}">&times;</button></td></tr>`).join("") + "</tbody>";
}

function shownColumns(form) {
  return F.USER_COLUMNS.filter((c) => view.columns.has(c) || form.users.some((u) => u[c] !== undefined));
}

function renderUsers(form) {
  const used = (f) => form.users.filter((u) => u[f] !== undefined && typeof u[f] === "object").length;
  $("user-field").innerHTML = F.USER_RESOURCE_FIELDS.map((f) =>
    `<option value="${f}" ${f === view.userField ? "selected" : ""}>${LABELS[f]}${used(f) ? ` (${used(f)})` : ""}</option>`).join("");
  const columns = shownColumns(form);
  $("user-columns").innerHTML = F.USER_COLUMNS.map((c) => {
    const has = form.users.some((u) => u[c] !== undefined);
    return `<label><input type="checkbox" data-column="${c}" ${columns.includes(c) ? "checked" : ""} ${has ? "disabled" : ""}> ${LABELS[c]}</label>`;
  }).join("");
  const field = view.userField;
  const arrival = form.arrivals ? Object.fromEntries(form.arrivals.map((a, k) => [a, k + 1])) : null;
  const head = `<tr><th>user</th>${arrival ? "<th>arrives</th>" : ""}<th>weight</th>${columns.map((c) => `<th>${LABELS[c]}</th>`).join("")}${
    form.resources.map((r) => `<th title="${esc(LABELS[field])}; blank: ${F.BLANK_MEANS[field]}">${esc(r.name)}</th>`).join("")}<th></th></tr>`;
  const rows = form.users.map((u, i) => {
    const weight = typeof u.weight === "object"
      ? `<input type="text" value="per resource" disabled ${attrs({path: F.paths.userField(u.name, "weight")})} aria-label="weight of ${esc(u.name)}">`
      : box(u.weight, attrs({t: "users", i, f: "weight", path: F.paths.userField(u.name, "weight")}) + ` aria-label="weight of ${esc(u.name)}"`, "", "1");
    const arrives = arrival ? `<td class="arrival"><span>${arrival[u.name] ?? "?"}</span>
        <button type="button" class="small" data-arrive="-1" data-i="${i}" aria-label="${esc(u.name)} arrives earlier">&uarr;</button>
        <button type="button" class="small" data-arrive="1" data-i="${i}" aria-label="${esc(u.name)} arrives later">&darr;</button></td>` : "";
    return `<tr>
      <td>${box(u.name, attrs({t: "users", i, f: "name", path: F.paths.userName(i)}) + ` aria-label="user ${i + 1} name"`, "name")}</td>
      ${arrives}<td>${weight}</td>
      ${columns.map((c) => `<td>${box(u[c], attrs({t: "users", i, f: c, path: F.paths.userField(u.name, c)}) + ` aria-label="${LABELS[c]} of ${esc(u.name)}"`, c === "group" ? "name" : "")}</td>`).join("")}
      ${form.resources.map((r, j) => `<td>${box(F.cell(u, field, r.name), attrs({t: "users", i, f: field, r: j, path: F.paths.userCell(u.name, field, r.name)}) +
        ` aria-label="${esc(u.name)} ${LABELS[field]} of ${esc(r.name)}"`, "", F.BLANK_MEANS[field])}</td>`).join("")}
      <td><button type="button" data-remove="users" data-i="${i}" aria-label="remove user ${esc(u.name)}">&times;</button></td></tr>`;
  }).join("");
  $("users-table").innerHTML = `<thead>${head}</thead><tbody>${rows}</tbody>`;
}

function renderGroups(form) {
  const used = (f) => form.groups.filter((g) => g[f] !== undefined).length;
  $("group-field").innerHTML = F.GROUP_RESOURCE_FIELDS.map((f) =>
    `<option value="${f}" ${f === view.groupField ? "selected" : ""}>${LABELS[f]}${used(f) ? ` (${used(f)})` : ""}</option>`).join("");
  $("group-controls").hidden = form.groups.length === 0;
  const field = view.groupField;
  if (!form.groups.length) {
    $("groups-table").innerHTML = `<tbody><tr><td class="muted wrap">no groups: the users share the cluster as equals (by weight)</td></tr></tbody>`;
    return;
  }
  const head = `<tr><th>group</th><th>parent</th><th>weight</th><th>priority</th>${
    form.resources.map((r) => `<th>${esc(r.name)}</th>`).join("")}<th></th></tr>`;
  const rows = form.groups.map((g, k) => `<tr>
      <td>${box(g.name, attrs({t: "groups", i: k, f: "name", path: F.paths.groupName(k)}) + ` aria-label="group ${k + 1} name"`, "name")}</td>
      ${["parent", "weight", "priority"].map((f) => `<td>${box(g[f], attrs({t: "groups", i: k, f, path: F.paths.groupField(g.name, f)}) +
        ` aria-label="${f} of group ${esc(g.name)}"`, f === "parent" ? "name" : "")}</td>`).join("")}
      ${form.resources.map((r, j) => `<td>${box(F.cell(g, field, r.name), attrs({t: "groups", i: k, f: field, r: j, path: F.paths.groupCell(g.name, field, r.name)}) +
        ` aria-label="group ${esc(g.name)} ${LABELS[field]} of ${esc(r.name)}"`)}</td>`).join("")}
      <td><button type="button" data-remove="groups" data-i="${k}" aria-label="remove group ${esc(g.name)}">&times;</button></td></tr>`).join("");
  $("groups-table").innerHTML = `<thead>${head}</thead><tbody>${rows}</tbody>`;
}

function renderExtras(form) {
  const count = F.KEPT_FIELDS.reduce((n, k) => n + (form[k] ? form[k].length : 0), 0);
  document.querySelector("#extras summary").textContent = `Variants, expectations, claims, errata (${count})`;
  $("extras-fields").innerHTML = F.KEPT_FIELDS.map((k) => `<label for="extra-${k}">${k}</label>
    <textarea id="extra-${k}" rows="${Math.min(12, 2 + JSON.stringify(form[k] || []).length / 60 | 0)}" spellcheck="false"
      ${attrs({t: "extras", f: k, path: k, errors: `extra-${k}-error`})}>${esc(JSON.stringify(form[k] || [], null, 1))}</textarea>
    <div class="field-error" id="extra-${k}-error" hidden></div>`).join("");
}

// -- focus across a re-render ------------------------------------------------------------------------
function rememberFocus() {
  const el = document.activeElement;
  if (!el || !el.dataset || el.dataset.t === undefined) return null;
  return {key: focusKey(el.dataset), start: el.selectionStart, end: el.selectionEnd};
}
function focusKey(d) {
  return `${d.t}|${d.i ?? ""}|${d.f ?? ""}|${d.r ?? ""}`;
}
function restoreFocus(focus) {
  if (!focus) return;
  const el = [...document.querySelectorAll("#case-panel [data-t]")].find((e) => focusKey(e.dataset) === focus.key);
  if (!el) return;
  el.focus();
  if (el.setSelectionRange && focus.start !== null && focus.start !== undefined) el.setSelectionRange(focus.start, focus.end);
}

// -- reading an edit -------------------------------------------------------------------------------------
// Apply one box's value to the form; true when the editor must be drawn again (a name changed).
export function apply(form, el) {
  const d = el.dataset;
  const i = Number(d.i);
  if (d.t === "case") {
    F.setScalar(form, d.f, el.value.trim() === "" ? null : el.value);
    return false;
  }
  if (d.t === "extras") return applyExtra(form, el);
  const row = form[d.t][i];
  if (d.f === "name") {
    ({resources: F.renameResource, users: F.renameUser, groups: F.renameGroup})[d.t](form, i, el.value);
    return true;
  }
  if (d.t === "resources") {
    if (d.f === "unit") F.setScalar(row, "unit", el.value || null);
    else row.capacity = F.parsed(el.value) ?? "";
    return false;
  }
  if (d.r !== undefined) {
    F.setCell(form, row, d.f, form.resources[Number(d.r)].name, F.parsed(el.value));
    return d.f === "weight";  // a scalar weight may have become per-resource
  }
  const text = ["group", "parent"].includes(d.f);
  F.setScalar(row, d.f, text ? (el.value.trim() === "" ? null : el.value) : F.parsed(el.value));
  return false;
}

// The kept lists are edited as JSON: a text that is not JSON is said here, next to its box.
function applyExtra(form, el) {
  const error = $(`extra-${el.dataset.f}-error`);
  let value;
  try {
    value = el.value.trim() === "" ? [] : JSON.parse(el.value);
    if (!Array.isArray(value)) throw new Error("expected a list [...]");
  } catch (e) {
    error.textContent = `${el.dataset.f}: not valid JSON: ${e.message}`;
    error.hidden = false;
    el.setAttribute("aria-invalid", "true");
    return null;  // nothing changed
  }
  error.hidden = true;
  el.removeAttribute("aria-invalid");
  form[el.dataset.f] = value;
  return false;
}

export function moveArrival(form, i, step) {
  const name = form.users[i].name;
  const order = form.arrivals;
  const k = order.indexOf(name);
  const to = k + step;
  if (k < 0 || to < 0 || to >= order.length) return;
  [order[k], order[to]] = [order[to], order[k]];
}

// -- errors next to their field -----------------------------------------------------------------------
// The box an error message names: the message starts with the field's path (the longest match).
export function boxOf(message) {
  const path = message.split(": ")[0];
  const boxes = [...document.querySelectorAll("[data-path]")];
  const exact = boxes.find((b) => b.dataset.path === path);
  if (exact) return exact;
  const inside = boxes.find((b) => b.dataset.path.startsWith(path + ".") || b.dataset.path.startsWith(path + "["));
  if (inside) return inside;
  return boxes.filter((b) => path.startsWith(b.dataset.path + ".") || path.startsWith(b.dataset.path + "["))
    .sort((a, b) => b.dataset.path.length - a.dataset.path.length)[0] || null;
}

// Before marking: show the users' or groups' per-resource field (or optional column) the message names.
export function reveal(form, message) {
  const parts = message.split(": ")[0].split(".");
  if (parts[0] === "users" && parts.length >= 3) {
    if (F.USER_RESOURCE_FIELDS.includes(parts[2]) && parts.length >= 4) view.userField = parts[2];
    if (F.USER_COLUMNS.includes(parts[2])) view.columns.add(parts[2]);
  } else if (parts[0] === "user_expectation") {
    view.userField = "user_expectation";
  } else if (parts[0] === "groups" && parts.length >= 4 && F.GROUP_RESOURCE_FIELDS.includes(parts[2])) {
    view.groupField = parts[2];
  } else if (F.KEPT_FIELDS.includes(parts[0].replace(/\[.*/, ""))) {
    $("extras").open = true;
  }
}

// The error box beside a field (its container names it in data-errors), or, for a message that
// names no box (a table emptied, a list's entry), the box of the part of the page it is about.
const BOX_OF_FIELD = {resources: "resources-error", units: "resources-error", users: "users-error",
  user_expectation: "users-error", arrivals: "users-error", groups: "groups-error"};

export function errorBoxFor(el, message) {
  const holder = el ? el.closest("[data-errors]") : null;
  if (holder) return $(holder.dataset.errors);
  const first = message.split(/[.[:]/)[0];
  if (F.KEPT_FIELDS.includes(first)) return $(`extra-${first}-error`);
  return $(BOX_OF_FIELD[first] || "case-error");
}
