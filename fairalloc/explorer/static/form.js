// The case form the page edits (fairalloc/explorer/form.py describes it): its fields, and the
// edits that change several places at once (renaming a resource renames it in every mapping).
"use strict";

export const USER_RESOURCE_FIELDS = ["demand", "request", "usage", "weight", "guarantee", "limit",
  "deserved", "borrowing_limit", "lending_limit", "user_expectation"];
export const GROUP_RESOURCE_FIELDS = ["guarantee", "limit", "deserved", "borrowing_limit", "lending_limit"];
// scalar columns of the users' table beside name and weight; shown when a user has them or when ticked
export const USER_COLUMNS = ["group", "max_tasks", "shared", "priority"];
export const KEPT_FIELDS = ["variants", "expect", "claims", "errata"];
// what an empty per-resource cell means, as the case format reads it
export const BLANK_MEANS = {demand: "0", request: "0", usage: "0", weight: "1", guarantee: "none",
  limit: "none", deserved: "none", borrowing_limit: "none", lending_limit: "none", user_expectation: "-"};

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

// What a box holds, as the server should see it: null when blank, a number when it is one,
// otherwise the text as typed (so that the case validation names the field and says what is wrong).
export function parsed(text) {
  const t = String(text).trim();
  if (t === "") return null;
  return NUMBER.test(t) ? Number(t) : t;
}

export function shown(value) {
  return value === null || value === undefined ? "" : String(value);
}

export function copy(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

function perResourceMappings(form) {
  const out = [];
  for (const u of form.users) {
    for (const f of USER_RESOURCE_FIELDS) if (u[f] && typeof u[f] === "object") out.push(u[f]);
  }
  for (const g of form.groups) {
    for (const f of GROUP_RESOURCE_FIELDS) if (g[f] && typeof g[f] === "object") out.push(g[f]);
  }
  return out;
}

function renameKey(mapping, from, to) {
  if (!(from in mapping) || from === to) return;
  const entries = Object.entries(mapping).map(([k, v]) => [k === from ? to : k, v]);
  for (const k of Object.keys(mapping)) delete mapping[k];
  for (const [k, v] of entries) mapping[k] = v;
}

// -- what the kept lists (variants, expectations, claims) say of a resource, a user or a group ----------------
const mapping = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// The mappings of the kept lists whose keys are resource names.
function keptResourceMappings(form) {
  const out = [];
  for (const v of form.variants || []) {
    if (!mapping(v)) continue;
    if (mapping(v.capacity)) out.push(v.capacity);
    if (mapping(v.misreport) && mapping(v.misreport.demand)) out.push(v.misreport.demand);
    if (mapping(v.add_user)) for (const f of USER_RESOURCE_FIELDS) if (mapping(v.add_user[f])) out.push(v.add_user[f]);
    if (mapping(v.usage)) out.push(...Object.values(v.usage).filter(mapping));
  }
  for (const e of form.expect || []) {
    if (!mapping(e)) continue;
    if (mapping(e.prices)) out.push(e.prices);
    if (mapping(e.allocation)) out.push(...Object.values(e.allocation).filter(mapping));
  }
  return out;
}

// The mappings of the kept lists whose keys are user (or group) names.
function keptUserMappings(form) {
  const out = [];
  for (const v of form.variants || []) if (mapping(v) && mapping(v.usage)) out.push(v.usage);
  for (const e of form.expect || []) {
    if (!mapping(e)) continue;
    for (const f of ["tasks", "allocation", "shares"]) if (mapping(e[f])) out.push(e[f]);
    for (const step of Array.isArray(e.steps) ? e.steps : []) if (mapping(step) && mapping(step.tasks)) out.push(step.tasks);
  }
  return out;
}

const CLAIM_USER = / for user (\S+)/;

// A user renamed: in the kept lists too (a variant's misreport, an expectation's tasks, a claim "for user A").
function renameUserInKept(form, old, name) {
  for (const m of keptUserMappings(form)) renameKey(m, old, name);
  for (const v of form.variants || []) {
    if (!mapping(v)) continue;
    if (mapping(v.misreport) && v.misreport.user === old) v.misreport.user = name;
    if (v.remove_user === old) v.remove_user = name;
  }
  for (const e of form.expect || []) if (mapping(e) && Array.isArray(e.order)) e.order = e.order.map((u) => (u === old ? name : u));
  form.claims = (form.claims || []).map((c) => {
    if (typeof c === "string") {
      const m = c.match(CLAIM_USER);
      return m && m[1] === old ? c.replace(CLAIM_USER, ` for user ${name}`) : c;
    }
    if (mapping(c) && c.user === old) return {...c, user: name};
    return c;
  });
}

// A user removed: what the kept lists say of her goes with her (her variants, claims, expected numbers).
function removeUserFromKept(form, gone) {
  for (const m of keptUserMappings(form)) delete m[gone];
  const about = (v) => mapping(v) && ((mapping(v.misreport) && v.misreport.user === gone) || v.remove_user === gone);
  if (form.variants) form.variants = form.variants.filter((v) => !about(v));
  for (const e of form.expect || []) if (mapping(e) && Array.isArray(e.order)) e.order = e.order.filter((u) => u !== gone);
  prune(form);
  if (form.claims) {
    form.claims = form.claims.filter((c) => (typeof c === "string" ? (c.match(CLAIM_USER) || [])[1] !== gone : !(mapping(c) && c.user === gone)));
  }
}

// -- renaming ------------------------------------------------------------------------------------------------
// A name is typed a key at a time, through blank and duplicate names: the rest of the form follows
// a row's name only when it is a valid one (not blank, no other row's), from the last valid name the
// rest of the form knows the row by; an invalid name is the server's to report, and nothing is lost.
const known = new WeakMap();

function knownName(row) {
  return known.has(row) ? known.get(row) : row.name;
}

// The row's new name, and the name the rest of the form must follow it from (null: not now).
function rename(rows, k, name) {
  const row = rows[k];
  const old = knownName(row);
  row.name = name;
  const taken = rows.some((r) => r !== row && (r.name === name || knownName(r) === name));
  if (String(name).trim() === "" || taken || name === old) {
    known.set(row, old);
    return null;
  }
  known.set(row, name);
  return old;
}

// After a removal: an expectation that no longer expects anything, or a misreport of nothing, goes.
function prune(form) {
  const empty = (m) => !mapping(m) || Object.keys(m).length === 0;
  for (const row of [...form.users, ...form.groups]) {
    for (const f of USER_RESOURCE_FIELDS) if (mapping(row[f]) && empty(row[f])) delete row[f];
  }
  if (form.variants) form.variants = form.variants.filter((v) => !(mapping(v) && mapping(v.misreport) && empty(v.misreport.demand)));
  const says = (e) => !mapping(e) || ["tasks", "prices", "allocation", "shares"].some((f) => !empty(e[f])) ||
    (Array.isArray(e.steps) && e.steps.length > 0) || Array.isArray(e.order);
  if (form.expect) form.expect = form.expect.filter(says);
}

export function renameResource(form, j, name) {
  const old = rename(form.resources, j, name);
  if (old === null) return;
  for (const m of [...perResourceMappings(form), ...keptResourceMappings(form)]) renameKey(m, old, name);
}

export function removeResource(form, j) {
  const [gone] = form.resources.splice(j, 1);
  for (const m of [...perResourceMappings(form), ...keptResourceMappings(form)]) delete m[knownName(gone)];
  prune(form);
}

function fresh(existing, stem) {
  const names = new Set(existing);
  let k = existing.length + 1;
  while (names.has(`${stem}${k}`)) k++;
  return `${stem}${k}`;
}

export function addResource(form) {
  form.resources.push({name: fresh(form.resources.map((r) => r.name), "r"), capacity: 10});
}

export function addUser(form) {
  const name = fresh(form.users.map((u) => u.name), "user");
  const queue = isQueueForm(form);
  const row = {name};
  row[queue ? "request" : "demand"] = Object.fromEntries(form.resources.map((r) => [r.name, 1]));
  form.users.push(row);
  if (form.arrivals) form.arrivals.push(name);
}

export function renameUser(form, i, name) {
  const old = rename(form.users, i, name);
  if (old === null) return;
  if (form.arrivals) form.arrivals = form.arrivals.map((a) => (a === old ? name : a));
  renameUserInKept(form, old, name);
}

export function removeUser(form, i) {
  const [row] = form.users.splice(i, 1);
  const gone = knownName(row);
  if (form.arrivals) form.arrivals = form.arrivals.filter((a) => a !== gone);
  removeUserFromKept(form, gone);
}

export function addGroup(form) {
  form.groups.push({name: fresh(form.groups.map((g) => g.name), "group")});
}

export function renameGroup(form, k, name) {
  const old = rename(form.groups, k, name);
  if (old === null) return;
  for (const u of form.users) if (u.group === old) u.group = name;
  for (const g of form.groups) if (g.parent === old) g.parent = name;
  for (const e of form.expect || []) {
    if (!mapping(e)) continue;
    if (mapping(e.shares)) renameKey(e.shares, old, name);
    if (Array.isArray(e.order)) e.order = e.order.map((u) => (u === old ? name : u));
  }
}

// A group removed: its members and subgroups move up to its parent.
export function removeGroup(form, k) {
  const [gone] = form.groups.splice(k, 1);
  const name = knownName(gone);
  for (const u of form.users) if (u.group === name) setScalar(u, "group", gone.parent ?? null);
  for (const g of form.groups) if (g.parent === name) setScalar(g, "parent", gone.parent ?? null);
}

export function setScalar(row, field, value) {
  if (value === null) delete row[field];
  else row[field] = value;
}

// One cell of a per-resource field.  A scalar weight that gets a per-resource value becomes a
// mapping with the scalar for every other resource (what the user had), as the case format allows.
export function setCell(form, row, field, resource, value) {
  let mapping = row[field];
  if (field === "weight" && typeof mapping !== "object") {
    const scalar = mapping === undefined || mapping === null ? null : mapping;
    mapping = scalar === null ? {} : Object.fromEntries(form.resources.map((r) => [r.name, scalar]));
  }
  mapping = mapping && typeof mapping === "object" ? mapping : {};
  if (value === null) delete mapping[resource];
  else mapping[resource] = value;
  if (Object.keys(mapping).length === 0) delete row[field];
  else row[field] = mapping;
}

export function cell(row, field, resource) {
  const mapping = row[field];
  if (field === "weight" && typeof mapping !== "object") return undefined;
  return mapping ? mapping[resource] : undefined;
}

// A queue case: some user or group has a queue field, or no user a demand (fairalloc/io/cases.py).
export function isQueueForm(form) {
  const queueFields = ["request", "usage", "priority", "guarantee", "limit", "deserved", "borrowing_limit",
    "lending_limit"];
  if (form.users.length && form.users.every((u) => u.demand === undefined)) return true;
  return form.users.some((u) => queueFields.some((f) => u[f] !== undefined)) ||
    form.groups.some((g) => ["priority", ...GROUP_RESOURCE_FIELDS].some((f) => g[f] !== undefined));
}

// The server's name for a field of the form (its error messages start with it).
export const paths = {
  resourceName: (j) => `resources[${j}].name`,
  capacity: (r) => `resources.${r}`,
  unit: (r) => `units.${r}`,
  userName: (i) => `users[${i}].name`,
  userField: (u, f) => `users.${u}.${f}`,
  userCell: (u, f, r) => (f === "user_expectation" ? `user_expectation.${u}.${r}` : `users.${u}.${f}.${r}`),
  groupName: (k) => `groups[${k}].name`,
  groupField: (g, f) => `groups.${g}.${f}`,
  groupCell: (g, f, r) => `groups.${g}.${f}.${r}`,
};
