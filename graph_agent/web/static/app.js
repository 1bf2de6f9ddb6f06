// graph-agent's web page. Plain JavaScript against the server's own API (threads, runs,
// streaming) plus the page's upload and file routes (graph_agent/web/app.py). Nothing is
// fetched from anywhere but this server. Everything the server or a user sends is inserted
// as text (textContent, createElement), never as HTML.
"use strict";

const ASSISTANT = "graph-agent";
const PAGE_API = "/app/api/threads";
const MEDIA = /\.(png|jpe?g|gif|bmp|webp|wav|mp3|flac|ogg|oga|opus|m4a)$/i;
const IMAGE = /\.(png|jpe?g|gif|bmp|webp)$/i;

const ui = {};
const state = {
  key: sessionStorage.getItem("graph-agent-key") || "",
  thread: null,        // the current thread id
  plan: [],            // [{id, task, deps, args}]
  steps: {},           // id -> {state, model, seconds, attempt, started}
  interrupt: null,     // the approval question while a run waits
  candidates: {},      // task -> [model ids] (for the approval's model choice)
  values: null,        // the thread's latest state values
  busy: false,
  blobs: [],           // object URLs to release when the page changes thread
};

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text != null) node.textContent = text;
  return node;
}

function headers(extra = {}) {
  const h = { ...extra };
  if (state.key) h["x-api-key"] = state.key;
  return h;
}

async function detailOf(response) {
  try {
    const body = await response.json();
    const d = body.detail ?? body.message ?? body;
    return typeof d === "string" ? d : JSON.stringify(d);
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "content-type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  if (!response.ok) {
    if (response.status === 401) ui.keyForm.hidden = false;
    throw new ApiError(response.status, await detailOf(response));
  }
  return response.status === 204 ? null : response.json();
}

// ---- messages ---------------------------------------------------------------------------

function showError(message) {
  ui.error.textContent = message;
  ui.error.hidden = false;
}

function clearError() {
  ui.error.hidden = true;
  ui.error.textContent = "";
}

function setBusy(busy, text) {
  state.busy = busy;
  ui.send.disabled = busy;
  ui.progress.hidden = !busy;
  if (text) ui.status.textContent = text;
  for (const b of ui.approval.querySelectorAll("button")) b.disabled = busy;
}

function updateProgress() {
  const ids = state.plan.map((s) => s.id);
  const done = ids.filter((id) => ["ok", "failed"].includes(state.steps[id]?.state)).length;
  ui.progressBar.max = Math.max(ids.length, 1);
  ui.progressBar.value = done;
  const running = ids.filter((id) => ["running", "retried"].includes(state.steps[id]?.state));
  if (running.length) {
    const now = Date.now();
    const words = running.map((id) => {
      const s = state.steps[id];
      const secs = s.started ? ((now - s.started) / 1000).toFixed(0) : "0";
      return `${id} (${taskOf(id)}) with ${s.model || "…"}, ${secs} s`;
    });
    ui.status.textContent = `Running ${words.join("; ")} — ${done} of ${ids.length} steps done`;
  }
}

setInterval(() => {
  if (!state.busy) return;
  updateProgress();
  for (const [id, s] of Object.entries(state.steps)) {
    if (s.state === "running" && s.started) drawStepState(id);
  }
}, 500);

function taskOf(id) {
  return state.plan.find((s) => s.id === id)?.task || "";
}

// ---- the plan as a graph (SVG) ------------------------------------------------------------

const BOX_W = 300, BOX_H = 68, GAP_X = 60, GAP_Y = 18;

function layout(plan) {
  const depth = {};
  for (const s of plan) {
    depth[s.id] = Math.max(0, ...(s.deps || []).map((d) => (depth[d] ?? -1) + 1));
  }
  const columns = {};
  for (const s of plan) (columns[depth[s.id]] ||= []).push(s.id);
  const at = {};
  for (const [col, ids] of Object.entries(columns)) {
    ids.forEach((id, row) => {
      at[id] = { x: 10 + col * (BOX_W + GAP_X), y: 10 + row * (BOX_H + GAP_Y) };
    });
  }
  const cols = Object.keys(columns).length;
  const rows = Math.max(1, ...Object.values(columns).map((ids) => ids.length));
  return { at, width: 20 + cols * BOX_W + (cols - 1) * GAP_X, height: 20 + rows * BOX_H + (rows - 1) * GAP_Y };
}

function stateLine(id) {
  const s = state.steps[id] || {};
  const st = s.state || "waiting";
  let time = "";
  if (s.seconds != null) time = ` · ${Number(s.seconds).toFixed(1)} s`;
  else if (st === "running" && s.started) time = ` · ${((Date.now() - s.started) / 1000).toFixed(0)} s…`;
  const attempt = s.attempt > 1 ? ` · attempt ${s.attempt}` : "";
  return `${st}${time}${attempt}`;
}

function clip(text, max = 44) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function modelLine(id) {
  return clip(`model: ${state.steps[id]?.model || "not chosen yet"}`);
}

function drawPlan() {
  ui.plan.replaceChildren();
  if (!state.plan.length) { ui.planSection.hidden = true; return; }
  ui.planSection.hidden = false;
  const { at, width, height } = layout(state.plan);
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "The plan" });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#98a2b3" }));
  defs.append(marker);
  root.append(defs);
  for (const s of state.plan) {
    for (const d of s.deps || []) {
      if (!at[d]) continue;
      const x1 = at[d].x + BOX_W, y1 = at[d].y + BOX_H / 2, x2 = at[s.id].x, y2 = at[s.id].y + BOX_H / 2;
      const mid = (x1 + x2) / 2;
      root.append(svg("path", { class: "edge", d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}` }));
    }
  }
  for (const s of state.plan) {
    const { x, y } = at[s.id];
    const g = svg("g", { class: "step", "data-id": s.id, "data-state": state.steps[s.id]?.state || "waiting", transform: `translate(${x},${y})` });
    g.append(svg("rect", { width: BOX_W, height: BOX_H, rx: 8 }));
    g.append(svg("text", { x: 10, y: 19, class: "title" }, clip(`${s.id} · ${s.task}`)));
    g.append(svg("text", { x: 10, y: 38, class: "model" }, modelLine(s.id)));
    g.append(svg("text", { x: 10, y: 57, class: "state" }, stateLine(s.id)));
    root.append(g);
  }
  ui.plan.append(root);
}

function drawStepState(id) {
  const g = ui.plan.querySelector(`g.step[data-id="${CSS.escape(id)}"]`);
  if (!g) return drawPlan();
  g.setAttribute("data-state", state.steps[id]?.state || "waiting");
  g.querySelector(".model").textContent = modelLine(id);
  g.querySelector(".state").textContent = stateLine(id);
}

function step(id) {
  return (state.steps[id] ||= { state: "waiting" });
}

function setPlan(tasks) {
  state.plan = tasks.map((t) => ({ id: t.id, task: t.task, deps: t.deps || [], args: t.args || {} }));
  for (const t of state.plan) step(t.id);
  drawPlan();
  updateProgress();
}

// ---- the stream ---------------------------------------------------------------------------

function onCustom(e) {
  switch (e.event) {
    case "plan_ready":
      state.steps = {};
      setPlan(e.tasks || []);
      ui.status.textContent = `Planned ${e.steps} step${e.steps === 1 ? "" : "s"}`;
      break;
    case "subtask_started": {
      const s = step(e.id);
      Object.assign(s, { model: e.model, attempt: e.attempt, seconds: null, started: Date.now() });
      s.state = "running";
      drawStepState(e.id);
      break;
    }
    case "subtask_progress":
      // A long step's pieces (a long recording's): "node-0: 2 of 5 pieces transcribed".
      ui.status.textContent = `${e.id}: ${e.done} of ${e.total} ${e.what || "pieces done"}`;
      break;
    case "subtask_finished": {
      const s = step(e.id);
      Object.assign(s, { seconds: e.seconds, model: e.model || s.model, started: null });
      if (e.status !== "ok") s.state = "failed";
      drawStepState(e.id);
      break;
    }
    case "critic_verdict": {
      const s = step(e.id);
      const verdict = String(e.verdict || "");
      // "retried": this model's result was refused and the next candidate runs next.
      if (verdict === "accepted") s.state = "ok";
      else if (verdict.startsWith("retry")) s.state = "retried";
      else s.state = "failed";
      s.verdict = verdict;
      s.reason = e.reason;
      drawStepState(e.id);
      break;
    }
    case "replan":
      ui.status.textContent = `Re-planning: ${e.reason}`;
      break;
    default:
      break;
  }
  updateProgress();
}

function onUpdates(chunk) {
  for (const [node, update] of Object.entries(chunk || {})) {
    if (node === "__interrupt__") {
      const value = (update || [])[0]?.value;
      if (value) state.interrupt = value;
    } else if (node === "select" && update?.selections) {
      for (const [id, sel] of Object.entries(update.selections)) {
        const first = (sel.candidates || [])[0];
        if (first) { step(id).model = first.id; drawStepState(id); }
      }
    }
  }
}

async function stream(body) {
  const response = await fetch(`/threads/${state.thread}/runs/stream`, {
    method: "POST",
    headers: headers({ "content-type": "application/json" }),
    body: JSON.stringify({ assistant_id: ASSISTANT, stream_mode: ["custom", "updates", "values"], ...body }),
  });
  if (!response.ok) throw new ApiError(response.status, await detailOf(response));
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      handleBlock(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
    }
  }
  if (buffer.trim()) handleBlock(buffer);
}

function handleBlock(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return;
  let payload = data.join("\n");
  try { payload = JSON.parse(payload); } catch { /* plain text */ }
  if (event === "custom") onCustom(payload);
  else if (event === "updates") onUpdates(payload);
  else if (event === "values") state.values = payload;
  else if (event === "error") throw new ApiError(500, `The run failed on the server: ${payload?.message || JSON.stringify(payload)}`);
}

// ---- sending a request ----------------------------------------------------------------------

async function ensureThread() {
  if (state.thread) return state.thread;
  const thread = await api("POST", "/threads", { metadata: { source: "web" } });
  state.thread = thread.thread_id;
  ui.threadLabel.textContent = `Conversation ${state.thread}`;
  return state.thread;
}

async function upload(file) {
  const url = `${PAGE_API}/${state.thread}/uploads/${encodeURIComponent(file.name)}`;
  const response = await fetch(url, { method: "PUT", headers: headers({ "content-type": file.type || "application/octet-stream" }), body: file });
  if (!response.ok) throw new ApiError(response.status, `${file.name}: ${await detailOf(response)}`);
  return response.json();
}

function context() {
  return { approve_plan: ui.approvePlan.checked };
}

async function run(body) {
  state.interrupt = null;
  state.values = null;
  setBusy(true, "Planning…");
  ui.approval.hidden = true;
  try {
    await stream({ ...body, context: context() });
    if (state.interrupt) showApproval(state.interrupt);
    else await showResults();
  } finally {
    setBusy(false);
    refreshThreads();
  }
}

async function send(event) {
  event.preventDefault();
  if (state.busy) return;
  clearError();
  const request = ui.request.value.trim();
  if (!request) { showError("Write what the agent should do first."); return; }
  try {
    await ensureThread();
    const inputs = {};
    const files = [...ui.files.files];
    if (files.length) ui.attached.replaceChildren();
    for (const [i, file] of files.entries()) {
      setBusy(true, `Uploading ${file.name} (${i + 1} of ${files.length})…`);
      const stored = await upload(file);
      inputs[stored.name] = stored.name;
      ui.attached.append(el("li", { text: `${stored.name} · ${stored.kind}` }));
    }
    setBusy(false);
    ui.files.value = "";
    ui.resultsSection.hidden = true;
    await run({ input: { request, inputs } });
    ui.request.value = "";
  } catch (err) {
    setBusy(false);
    showError(err.message || String(err));
  } finally {
    ui.files.value = "";  // a refused file is not sent again with the next request
  }
}

// ---- approval -------------------------------------------------------------------------------

function showApproval(question) {
  const plan = question.plan?.subtasks || [];
  if (!state.plan.length) setPlan(plan);
  ui.approvalQuestion.textContent = question.question || "Run this plan?";
  ui.approvalProblems.replaceChildren(...(question.problems || []).map((p) => el("li", { text: p })));
  const body = ui.approval.querySelector("tbody");
  body.replaceChildren();
  for (const s of plan) {
    const keep = el("input", { type: "checkbox", checked: true, "data-step": s.id, className: "keep" });
    keep.setAttribute("aria-label", `keep ${s.id}`);
    const models = el("select", { "data-step": s.id, className: "model-choice" });
    models.setAttribute("aria-label", `model for ${s.id}`);
    models.append(el("option", { value: "", text: "best match (default)" }));
    for (const m of state.candidates[s.task] || []) models.append(el("option", { value: m, text: m }));
    const chosen = (s.constraints?.models || [])[0];
    if (chosen) models.value = chosen;
    body.append(el("tr", { "data-step": s.id },
      el("td", {}, keep), el("td", { text: s.id }), el("td", { text: s.task }),
      el("td", { text: Object.values(s.args || {}).join(", ") }), el("td", {}, models)));
    loadCandidates(s.task, models, chosen);
  }
  ui.approval.hidden = false;
  ui.approval.dataset.plan = JSON.stringify(plan);
  ui.status.textContent = "Waiting for your approval";
}

async function loadCandidates(task, select, chosen) {
  if (state.candidates[task]) return;
  try {
    const found = await api("GET", `/app/api/models?task=${encodeURIComponent(task)}`);
    state.candidates[task] = found.models.map((m) => m.id);
    for (const m of state.candidates[task]) select.append(el("option", { value: m, text: m }));
    if (chosen) select.value = chosen;
  } catch { /* the default choice still works */ }
}

function editedPlan() {
  const plan = JSON.parse(ui.approval.dataset.plan || "[]");
  const kept = new Set([...ui.approval.querySelectorAll("input.keep")].filter((c) => c.checked).map((c) => c.dataset.step));
  const models = {};
  for (const s of ui.approval.querySelectorAll("select.model-choice")) if (s.value) models[s.dataset.step] = s.value;
  return plan.filter((s) => kept.has(s.id)).map((s) => {
    const constraints = { ...(s.constraints || {}) };
    if (models[s.id]) constraints.models = [models[s.id]];
    else delete constraints.models;
    return { ...s, constraints };
  });
}

async function answerApproval(answer) {
  clearError();
  state.steps = {};
  try {
    ui.approval.hidden = true;
    await run({ command: { resume: answer } });
  } catch (err) {
    showError(err.message || String(err));
  }
}

// ---- results --------------------------------------------------------------------------------

async function mediaUrl(where, name) {
  const response = await fetch(`${PAGE_API}/${state.thread}/files/${where}/${encodeURIComponent(name)}`, { headers: headers() });
  if (!response.ok) throw new ApiError(response.status, await detailOf(response));
  const url = URL.createObjectURL(await response.blob());
  state.blobs.push(url);
  return url;
}

function baseName(path) {
  return String(path).split(/[\\/]/).pop();
}

function isArtifact(value, artifacts, id) {
  // The report says which outputs are files (a step's "artifact": its file name on a server
  // run). A thread saved before the server named files that way had full paths instead.
  if (artifacts[id] !== undefined) return true;
  return typeof value === "string" && !value.includes("\n") && /^[/\\A-Za-z]/.test(value) && /[\\/]/.test(value) && MEDIA.test(value);
}

async function mediaElement(value, label) {
  const name = baseName(value);
  const url = await mediaUrl("outputs", name);
  const media = IMAGE.test(name) ? el("img", { src: url, alt: label }) : el("audio", { src: url, controls: true, preload: "auto" });
  const link = el("a", { href: url, download: name, text: `Download ${name}` });
  return [media, el("div", {}, link)];
}

function renderMarkdown(markdown) {
  // A small Markdown reader for the report's own output: headings, lists, tables, code,
  // **bold**, _italic_ and `code`. Links keep their text only (their targets are server paths).
  const box = el("div");
  const lines = String(markdown || "").split("\n");
  const inline = (text, parent) => {
    const parts = String(text).split(/(`[^`]+`|\*\*[^*]+\*\*|\[[^\]]+\]\([^)]*\))/);
    for (const part of parts) {
      if (!part) continue;
      if (part.startsWith("`") && part.endsWith("`")) parent.append(el("code", { text: part.slice(1, -1) }));
      else if (part.startsWith("**") && part.endsWith("**")) parent.append(el("strong", { text: part.slice(2, -2) }));
      else if (/^\[[^\]]+\]\(/.test(part)) parent.append(el("span", { text: part.slice(1, part.indexOf("](")) }));
      else parent.append(document.createTextNode(part.replace(/(^|\s)_([^_]+)_(?=\s|$|[.,;:])/g, "$1$2")));
    }
    return parent;
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.startsWith("```")) {
      const lang = line.slice(3).trim();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      i++;
      if (lang === "mermaid" && state.plan.length) {
        box.append(el("p", { className: "muted", text: "The plan's diagram is drawn above." }));
      } else box.append(el("pre", {}, el("code", { text: code.join("\n") })));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) { box.append(inline(heading[2], el(`h${Math.min(heading[1].length + 2, 6)}`))); i++; continue; }
    if (line.startsWith("|")) {
      const table = el("table");
      for (; i < lines.length && lines[i].startsWith("|"); i++) {
        if (/^\|[\s:|-]+\|$/.test(lines[i])) continue;
        const cells = lines[i].replace(/^\||\|$/g, "").split("|");
        const row = el("tr");
        for (const c of cells) row.append(inline(c.trim(), el(table.rows.length ? "td" : "th")));
        table.append(row);
      }
      box.append(table);
      continue;
    }
    if (/^\s*[-*]\s+/.test(line)) {
      const list = el("ul");
      for (; i < lines.length && /^\s*[-*]\s+/.test(lines[i]); i++) list.append(inline(lines[i].replace(/^\s*[-*]\s+/, ""), el("li")));
      box.append(list);
      continue;
    }
    if (!line.trim()) { i++; continue; }
    const para = [];
    for (; i < lines.length && lines[i].trim() && !/^(#|```|\||\s*[-*]\s)/.test(lines[i]); i++) para.push(lines[i]);
    box.append(inline(para.join(" "), el("p")));
  }
  return box;
}

function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  state.blobs.push(url);
  return el("a", { href: url, download: name, text: name });
}

async function showResults() {
  // The thread's state, not the stream's last values: it holds the plan and any error too.
  const values = (await api("GET", `/threads/${state.thread}/state`)).values || {};
  state.values = values;
  if (values.plan?.subtasks && !state.plan.length) setPlan(values.plan.subtasks);
  for (const s of values.report?.steps || []) {
    const st = step(s.id);
    st.model = s.model || st.model;
    if (s.seconds != null) st.seconds = s.seconds;
    if (s.attempts != null) st.attempt = Number(s.attempts);
    st.state = s.status === "ok" ? "ok" : s.status === "failed" ? "failed" : st.state;
  }
  // A run that stopped before its steps (a rejected plan, a refused input) ran none of them.
  if (values.error) for (const s of state.plan) if (step(s.id).state === "waiting") step(s.id).state = "not run";
  drawPlan();
  ui.resultsSection.hidden = false;
  // The server names outputs by file name; a thread saved before it did showed full paths,
  // which are cut to their file names here.
  ui.answer.textContent = String(values.answer || "(no answer)").replace(/(?:\/[^\s/]+)+\/([^\s/]+\.[A-Za-z0-9]+)/g, "$1");
  ui.answer.classList.toggle("failed", Boolean(values.error));
  if (values.error) showError(values.answer || values.error);
  ui.results.replaceChildren();
  const tasks = Object.fromEntries((values.plan?.subtasks || []).map((s) => [s.id, s.task]));
  const artifacts = Object.fromEntries((values.report?.steps || []).filter((s) => s.artifact).map((s) => [s.id, s.artifact]));
  for (const [id, value] of Object.entries(values.outputs || {})) {
    const box = el("div", { className: "result", "data-id": id });
    box.append(el("h3", { text: `${id} · ${tasks[id] || ""}` }));
    if (isArtifact(value, artifacts, id) && MEDIA.test(String(value))) {
      box.dataset.kind = IMAGE.test(value) ? "image" : "audio";
      try { box.append(...(await mediaElement(value, `${id} output`))); }
      catch (err) { box.append(el("p", { className: "error", text: err.message })); }
    } else {
      box.dataset.kind = "text";
      box.append(el("pre", { text: String(value) }));
    }
    ui.results.append(box);
  }
  ui.report.replaceChildren(renderMarkdown(values.report_markdown));
  ui.downloads.replaceChildren(
    "Download: ",
    download("report.md", values.report_markdown || "", "text/markdown"),
    download("report.json", JSON.stringify(values.report || {}, null, 2), "application/json"),
  );
  ui.status.textContent = "Done";
}

// ---- threads --------------------------------------------------------------------------------

async function refreshThreads() {
  try {
    const threads = await api("POST", "/threads/search", { limit: 20, sort_by: "updated_at", sort_order: "desc" });
    ui.threads.replaceChildren();
    if (!threads.length) ui.threads.append(el("li", { className: "muted", text: "none yet" }));
    for (const t of threads) {
      const title = t.values?.request || "(no request yet)";
      const button = el("button", { type: "button", "data-thread": t.thread_id }, title.slice(0, 60), el("small", { text: `${t.status} · ${new Date(t.updated_at).toLocaleString()}` }));
      if (t.thread_id === state.thread) button.classList.add("current");
      button.addEventListener("click", () => openThread(t.thread_id));
      ui.threads.append(el("li", {}, button));
    }
  } catch (err) {
    if (err.status === 401) showError(err.message);
  }
}

function resetView() {
  for (const url of state.blobs) URL.revokeObjectURL(url);
  Object.assign(state, { plan: [], steps: {}, interrupt: null, values: null, blobs: [] });
  ui.attached.replaceChildren();
  ui.planSection.hidden = true;
  ui.approval.hidden = true;
  ui.resultsSection.hidden = true;
  clearError();
}

async function openThread(id) {
  resetView();
  state.thread = id;
  ui.threadLabel.textContent = `Conversation ${id}`;
  try {
    const current = await api("GET", `/threads/${id}/state`);
    state.values = current.values || {};
    const waiting = (current.tasks || []).flatMap((t) => t.interrupts || []).map((i) => i.value).find(Boolean);
    if (state.values.plan?.subtasks) setPlan(state.values.plan.subtasks);
    if (waiting) showApproval(waiting);
    else if (state.values.answer) await showResults();
  } catch (err) {
    showError(err.message);
  }
  refreshThreads();
}

function newThread() {
  resetView();
  state.thread = null;
  ui.threadLabel.textContent = "";
  refreshThreads();
}

// ---- start ----------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  for (const id of ["request", "files", "send", "error", "progress", "status", "plan", "approval", "answer", "results", "report", "downloads", "threads", "attached"]) ui[id] = document.getElementById(id);
  Object.assign(ui, {
    requestForm: document.getElementById("request-form"),
    keyForm: document.getElementById("key-form"),
    key: document.getElementById("key"),
    approvePlan: document.getElementById("approve-plan"),
    progressBar: document.getElementById("progress-bar"),
    planSection: document.getElementById("plan-section"),
    resultsSection: document.getElementById("results-section"),
    approvalQuestion: document.getElementById("approval-question"),
    approvalProblems: document.getElementById("approval-problems"),
    threadLabel: document.getElementById("thread-label"),
  });
  ui.requestForm.addEventListener("submit", send);
  ui.keyForm.addEventListener("submit", (e) => {
    e.preventDefault();
    state.key = ui.key.value.trim();
    sessionStorage.setItem("graph-agent-key", state.key);
    ui.keyForm.hidden = true;
    clearError();
    refreshThreads();
  });
  ui.files.addEventListener("change", () => {
    ui.attached.replaceChildren(...[...ui.files.files].map((f) => el("li", { text: `${f.name} · ${(f.size / 1e6).toFixed(2)} MB` })));
  });
  document.getElementById("new-thread").addEventListener("click", newThread);
  document.getElementById("approve").addEventListener("click", () => answerApproval(true));
  document.getElementById("run-edited").addEventListener("click", () => answerApproval({ plan: { subtasks: editedPlan() } }));
  document.getElementById("reject").addEventListener("click", () => answerApproval(false));
  refreshThreads();
  document.body.dataset.ready = "true";
});
