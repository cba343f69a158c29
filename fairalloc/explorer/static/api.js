// Talking to the server: JSON in and out, progress streamed as lines, requests an edit overtook cancelled.
"use strict";

export async function getJSON(path) {
  const response = await fetch(path);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

// This page's id, and the round (edit) its requests belong to: the server drops the requests of a
// round as soon as a newer one arrives (X-Explorer-Round, fairalloc/explorer/app.py).
const PAGE = Math.random().toString(36).slice(2, 12);
export const rounds = {current: 0};

// POST a JSON body. With onProgress, ask for the streamed answer: progress lines
// ({"progress": {done, total, what}}) before the result line ({"result": ...}) or an error line.
export async function post(path, body, {signal, onProgress, round} = {}) {
  const headers = {"Content-Type": "application/json", "X-Explorer-Round": `${PAGE}:${round ?? rounds.current}`};
  if (onProgress) headers.Accept = "application/x-ndjson";
  const response = await fetch(path, {method: "POST", headers, body: JSON.stringify(body), signal});
  if (!response.ok || !onProgress) {
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    return data;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (!line) continue;
      const item = JSON.parse(line);
      if ("result" in item) return item.result;
      if ("error" in item) throw new Error(item.error);
      if (item.progress) onProgress(item.progress);
    }
  }
  throw new Error(`${path}: the answer ended before its result`);
}

// A request that a newer edit made pointless: dropped silently, never painted.
export function isCancelled(error) {
  return error && error.name === "AbortError";
}
