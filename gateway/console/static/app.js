// The a2amesh console: it asks the gateway over its own A2A JSON-RPC
// endpoint (SendStreamingMessage, CancelTask, ListTasks) and reads the
// console's JSON endpoints (topology, live events). Every text shown is
// set with textContent: task contents are never parsed as HTML.
"use strict";

const EVENT_KEY = "a2amesh.adk.event";
const TERMINAL = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"]);
const $ = (id) => document.getElementById(id);

// el makes an element with a class and text.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function newID() {
  if (self.crypto && crypto.randomUUID) return crypto.randomUUID();
  return "m-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
}

// --- credentials -----------------------------------------------------

function credHeaders() {
  const name = sessionStorage.getItem("a2amesh.cred.header");
  const value = sessionStorage.getItem("a2amesh.cred.value");
  return name && value ? { [name]: value } : {};
}

function setupCredentials() {
  $("cred-header").value = sessionStorage.getItem("a2amesh.cred.header") || "Authorization";
  $("cred-save").addEventListener("click", () => {
    sessionStorage.setItem("a2amesh.cred.header", $("cred-header").value.trim());
    sessionStorage.setItem("a2amesh.cred.value", $("cred-value").value);
    $("credentials").open = false;
    start();
  });
}

// --- JSON-RPC ----------------------------------------------------------

let rpcSeq = 0;

function rpcBody(method, params) {
  return JSON.stringify({ jsonrpc: "2.0", id: ++rpcSeq, method, params });
}

function rpcHeaders(accept) {
  return Object.assign({ "Content-Type": "application/json", "Accept": accept, "A2A-Version": "1.0" }, credHeaders());
}

async function rpc(method, params) {
  const res = await fetch("/", { method: "POST", headers: rpcHeaders("application/json"), body: rpcBody(method, params) });
  const body = await res.json().catch(() => null);
  if (!body) throw new Error(method + ": HTTP " + res.status);
  if (body.error) throw new Error(method + ": " + body.error.message + " (" + body.error.code + ")");
  return body.result;
}

// sse yields the data of each event of a text/event-stream response.
async function* sse(res) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      if (data) yield data;
    }
  }
}

// --- texts of A2A objects ---------------------------------------------

function partsText(parts) {
  return (parts || []).map((p) => (typeof p.text === "string" ? p.text : p.data !== undefined ? JSON.stringify(p.data) : "")).join("");
}

// describe returns what an A2A stream response is: its task, state,
// text, and the ADK facts (agent, run path) in its metadata.
function describe(r) {
  const d = { taskId: "", contextId: "", state: "", text: "", kind: "", meta: null, append: false, artifactId: "" };
  if (r.task) {
    Object.assign(d, { kind: "task", taskId: r.task.id, contextId: r.task.contextId, state: r.task.status && r.task.status.state });
    d.text = r.task.status && r.task.status.message ? partsText(r.task.status.message.parts) : "";
  } else if (r.statusUpdate) {
    const u = r.statusUpdate;
    Object.assign(d, { kind: "status", taskId: u.taskId, contextId: u.contextId, state: u.status && u.status.state });
    d.text = u.status && u.status.message ? partsText(u.status.message.parts) : "";
    d.meta = (u.metadata && u.metadata[EVENT_KEY]) || (u.status && u.status.message && u.status.message.metadata && u.status.message.metadata[EVENT_KEY]) || null;
  } else if (r.artifactUpdate) {
    const u = r.artifactUpdate;
    Object.assign(d, { kind: "artifact", taskId: u.taskId, contextId: u.contextId, append: !!u.append, artifactId: u.artifact && u.artifact.artifactId });
    d.text = u.artifact ? partsText(u.artifact.parts) : "";
    d.meta = (u.metadata && u.metadata[EVENT_KEY]) || (u.artifact && u.artifact.metadata && u.artifact.metadata[EVENT_KEY]) || null;
  } else if (r.message) {
    Object.assign(d, { kind: "message", taskId: r.message.taskId || "", contextId: r.message.contextId || "", text: partsText(r.message.parts) });
    d.meta = (r.message.metadata && r.message.metadata[EVENT_KEY]) || null;
  }
  return d;
}

function runPath(meta) {
  if (!meta) return [];
  const path = (meta.run_path || []).map((s) => s.agent).filter(Boolean);
  if (path.length === 0 && meta.agent) path.push(meta.agent);
  return path;
}

function stepText(d) {
  const m = d.meta || {};
  const bits = [];
  if (m.action && m.action.transfer_to_agent) bits.push("→ transfer to " + (m.action.transfer_to_agent.dest_agent_name || JSON.stringify(m.action.transfer_to_agent)));
  if (m.tool_name) bits.push("[" + m.tool_name + "]");
  if (m.role && m.role !== "assistant") bits.push(m.role + ":");
  if (m.error) bits.push("error: " + m.error);
  if (d.text) bits.push(d.text.length > 300 ? d.text.slice(0, 300) + "…" : d.text);
  return bits.join(" ");
}

// --- the task tree, by RunPath ----------------------------------------

class Tree {
  constructor(root) { this.root = root; this.clear(""); }
  clear(taskId) {
    this.nodes = new Map();
    this.artifacts = new Map(); // artifact id -> the step its chunks extend
    this.root.replaceChildren();
    this.top = el("ul");
    this.root.append(this.top);
    $("tree-task").textContent = taskId ? "task " + taskId : "";
  }
  // node returns the list item of a path, making it and its parents.
  node(path) {
    let parent = this.top;
    let key = "";
    let item = null;
    for (const name of path) {
      key += "/" + name;
      item = this.nodes.get(key);
      if (!item) {
        item = el("li");
        item.dataset.agent = name;
        item.append(el("span", "agent", name));
        item.steps = el("div", "steps");
        item.kids = el("ul");
        item.append(item.steps, item.kids);
        parent.append(item);
        this.nodes.set(key, item);
      }
      parent = item.kids;
    }
    return item;
  }
  add(d) {
    // A stream's middle chunks carry no metadata: they continue the step
    // of their artifact.
    const chunkOf = d.kind === "artifact" && d.append ? this.artifacts.get(d.artifactId) : null;
    if (chunkOf) {
      chunkOf.textContent += d.text;
      return;
    }
    const path = runPath(d.meta);
    if (path.length === 0) return;
    const item = this.node(path);
    const text = stepText(d);
    if (!text) return;
    const step = el("div", "step", text);
    if (d.kind === "artifact") this.artifacts.set(d.artifactId, step);
    item.steps.append(step);
  }
}

// --- asking -------------------------------------------------------------

const ask = { contextId: "", taskId: "", inputRequired: false, running: false, abort: null };
let tree;

function setState(state) {
  const s = $("ask-state");
  s.textContent = state ? state.replace("TASK_STATE_", "").toLowerCase().replace("_", " ") : "";
  s.className = "state " + (state || "");
  s.dataset.state = state || "";
}

async function send(text) {
  if (taskFeed) { taskFeed.abort(); taskFeed = null; }
  const message = { messageId: newID(), role: "ROLE_USER", parts: [{ text }] };
  if (ask.contextId) message.contextId = ask.contextId;
  const answering = ask.inputRequired && ask.taskId;
  if (answering) message.taskId = ask.taskId;
  else { $("answer").textContent = ""; }
  $("prompt").hidden = true;
  ask.inputRequired = false;
  ask.running = true;
  $("ask-send").disabled = true;
  $("ask-cancel").disabled = false;
  const ctl = new AbortController();
  ask.abort = ctl;
  const answers = new Map(); // artifact id -> text
  try {
    const res = await fetch("/", { method: "POST", headers: rpcHeaders("text/event-stream"), body: rpcBody("SendStreamingMessage", { message }), signal: ctl.signal });
    if (!res.ok || !(res.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
      const body = await res.json().catch(() => null);
      throw new Error(body && body.error ? body.error.message + " (" + body.error.code + ")" : "HTTP " + res.status);
    }
    for await (const data of sse(res)) {
      const msg = JSON.parse(data);
      if (msg.error) throw new Error(msg.error.message + " (" + msg.error.code + ")");
      const d = describe(msg.result || {});
      if (d.taskId && d.taskId !== ask.taskId) {
        ask.taskId = d.taskId;
        tree.clear(d.taskId);
      }
      if (d.contextId) ask.contextId = d.contextId;
      if (d.state) setState(d.state);
      tree.add(d);
      if (d.kind === "artifact" && !d.meta?.tool_name) {
        answers.set(d.artifactId, (d.append ? answers.get(d.artifactId) || "" : "") + d.text);
        $("answer").textContent = [...answers.values()].join("\n");
      }
      if (d.kind === "message") $("answer").textContent = d.text;
      if (d.state === "TASK_STATE_INPUT_REQUIRED") {
        ask.inputRequired = true;
        $("prompt-text").textContent = d.text;
        $("prompt").hidden = false;
      }
    }
  } catch (err) {
    if (err.name !== "AbortError") $("answer").textContent = "error: " + err.message;
  } finally {
    ask.running = false;
    ask.abort = null;
    $("ask-send").disabled = false;
    $("ask-cancel").disabled = true;
    refreshTasks();
  }
}

async function cancel() {
  if (!ask.taskId) return;
  try {
    const task = await rpc("CancelTask", { id: ask.taskId });
    if (task && task.status) setState(task.status.state);
  } catch (err) {
    $("answer").textContent = "cancel: " + err.message;
  }
}

function setupAsk() {
  tree = new Tree($("tree"));
  $("ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("ask-input").value.trim();
    if (!text || ask.running) return;
    $("ask-input").value = "";
    send(text);
  });
  $("ask-cancel").addEventListener("click", cancel);
  $("ask-new").addEventListener("click", () => {
    if (taskFeed) { taskFeed.abort(); taskFeed = null; }
    Object.assign(ask, { contextId: "", taskId: "", inputRequired: false });
    $("prompt").hidden = true;
    $("answer").textContent = "";
    setState("");
    tree.clear("");
  });
}

// --- tasks --------------------------------------------------------------

async function refreshTasks() {
  const params = { pageSize: 50 };
  const state = $("filter-state").value;
  const ctx = $("filter-context").value.trim();
  if (state) params.status = state;
  if (ctx) params.contextId = ctx;
  const body = $("tasks").tBodies[0];
  try {
    const res = await rpc("ListTasks", params);
    $("tasks-error").textContent = "";
    body.replaceChildren();
    for (const t of res.tasks || []) {
      const tr = el("tr");
      tr.dataset.task = t.id;
      const state = (t.status && t.status.state) || "";
      tr.append(el("td", "id", t.id.slice(0, 8)), el("td", "id", (t.contextId || "").slice(0, 8)),
        el("td", "state " + state, state.replace("TASK_STATE_", "").toLowerCase()),
        el("td", "", t.status && t.status.timestamp ? new Date(t.status.timestamp).toLocaleTimeString() : ""));
      tr.title = t.id;
      tr.addEventListener("click", () => { Object.assign(ask, { contextId: t.contextId, taskId: t.id, inputRequired: state === "TASK_STATE_INPUT_REQUIRED" }); setState(state); showTask(t.id); });
      body.append(tr);
    }
  } catch (err) {
    $("tasks-error").textContent = err.message;
  }
}

// showTask draws a listed task's tree from its events on NATS (those of
// the last day, then the new ones as they come), or, without the feed,
// its answer and question from the task itself.
let taskFeed = null;

async function showTask(id) {
  if (taskFeed) taskFeed.abort();
  tree.clear(id);
  $("answer").textContent = "";
  $("prompt").hidden = true;
  try {
    const t = await rpc("GetTask", { id, historyLength: 0 });
    $("answer").textContent = (t.artifacts || []).map((a) => partsText(a.parts)).join("\n");
    if (t.status && t.status.state === "TASK_STATE_INPUT_REQUIRED" && t.status.message) {
      $("prompt-text").textContent = partsText(t.status.message.parts);
      $("prompt").hidden = false;
    }
  } catch (err) {
    $("answer").textContent = err.message;
    return;
  }
  if (!eventsOn || topologyErr) return;
  const ctl = new AbortController();
  taskFeed = ctl;
  try {
    const res = await fetch("api/events?since=24h&task=" + encodeURIComponent(id),
      { headers: Object.assign({ Accept: "text/event-stream" }, credHeaders()), signal: ctl.signal });
    if (!res.ok) return;
    for await (const data of sse(res)) {
      const e = JSON.parse(data);
      const d = describe(e.event || {});
      tree.add(d);
      if (d.state && ask.taskId === id) setState(d.state);
    }
  } catch (err) {
    // aborted: another task was chosen, or a new question asked
  }
}

// --- topology -------------------------------------------------------------

async function getJSON(path) {
  const res = await fetch(path, { headers: credHeaders() });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error((body && body.error) || "HTTP " + res.status);
  return body;
}

function graphNode(n, health) {
  const li = el("li");
  let label, cls = "node", kids = [];
  if (n.agent) {
    label = n.alias ? n.alias + " (" + n.agent + ")" : n.agent;
    kids = n.subAgents || [];
  } else if (n.sequential || n.parallel || n.loop) {
    const w = n.sequential || n.parallel || n.loop;
    label = (n.sequential ? "sequential " : n.parallel ? "parallel " : "loop ") + w.name;
    cls += " workflow"; kids = w.steps || [];
  } else if (n.supervisor) {
    label = "supervision"; cls += " workflow";
    kids = [n.supervisor.supervisor, ...(n.supervisor.subAgents || [])].filter(Boolean);
  } else if (n.planExecute) {
    label = "plan-execute " + n.planExecute.name; cls += " workflow";
    kids = [n.planExecute.executor].filter(Boolean);
  } else {
    label = "?";
  }
  const box = el("span", cls);
  if (n.agent) {
    const h = health.get(n.agent);
    box.append(el("span", "dot " + (h ? (h.ready ? "ready" : "down") : "")));
    box.title = h ? h.url + " — " + h.status : "";
    box.dataset.agent = n.agent;
    box.dataset.ready = h && h.ready ? "yes" : "no";
  }
  box.append(el("span", "", label));
  li.append(box);
  if (kids.length) {
    const ul = el("ul");
    for (const k of kids) ul.append(graphNode(k, health));
    li.append(ul);
  }
  return li;
}

let eventsOn = false;
let topologyErr = "";

async function refreshTopology() {
  try {
    const t = await getJSON("api/topology");
    $("mesh-name").textContent = t.name || "Mesh";
    const health = new Map((t.agents || []).map((a) => [a.key, a]));
    const root = el("ul");
    const top = el("li");
    top.append(el("span", "node", t.name || "gateway"));
    if (t.entry) { const ul = el("ul"); ul.append(graphNode(t.entry, health)); top.append(ul); }
    root.append(top);
    $("topology").replaceChildren(root);
    const list = $("agents");
    list.replaceChildren();
    for (const a of t.agents || []) {
      const li = el("li", "", a.key + "  " + a.url + "  " + (a.ready ? "ready" : a.status));
      list.append(li);
    }
    eventsOn = !!t.events;
    topologyErr = "";
  } catch (err) {
    topologyErr = err.message;
    $("topology").replaceChildren(el("div", "error", "topology: " + err.message));
  }
}

// --- the live events feed ----------------------------------------------------

let feed = null;
const MAX_EVENTS = 500;

async function openEvents() {
  if (feed) feed.abort();
  const ctl = new AbortController();
  feed = ctl;
  const status = $("events-status");
  for (let attempt = 0; !ctl.signal.aborted; attempt++) {
    try {
      const res = await fetch("api/events", { headers: Object.assign({ Accept: "text/event-stream" }, credHeaders()), signal: ctl.signal });
      if (!res.ok) {
        const body = await res.json().catch(() => null);
        status.textContent = (body && body.error) || "HTTP " + res.status;
        return;
      }
      status.textContent = "following every agent's events";
      status.dataset.open = "yes";
      for await (const data of sse(res)) showEvent(JSON.parse(data));
    } catch (err) {
      if (ctl.signal.aborted) return;
      status.textContent = "feed cut: " + err.message + "; reconnecting";
    }
    status.dataset.open = "";
    await new Promise((r) => setTimeout(r, Math.min(1000 * (attempt + 1), 10000)));
  }
}

const feedChunks = new Map(); // agent, task and artifact -> the line its chunks extend

function showEvent(e) {
  const d = describe(e.event || {});
  const key = (e.agent || "") + "/" + (e.taskId || "") + "/" + d.artifactId;
  const list = $("events");
  if (d.kind === "artifact" && d.append && feedChunks.has(key)) {
    feedChunks.get(key).textContent += d.text;
    return;
  }
  const path = runPath(d.meta);
  const what = d.state ? d.state.replace("TASK_STATE_", "").toLowerCase() : d.kind;
  const line = el("li", "", new Date(e.stored).toLocaleTimeString() + "  " + (e.agent || "?").padEnd(12) + " " + (e.taskId || "").slice(0, 8) + "  " +
    "  ".repeat(Math.max(0, path.length - 1)) + (path.length ? path[path.length - 1] + ": " : "") + what + (stepText(d) ? "  " + stepText(d) : ""));
  line.dataset.agent = e.agent || "";
  line.dataset.task = e.taskId || "";
  if (d.kind === "artifact") feedChunks.set(key, line);
  if (d.state && (TERMINAL.has(d.state) || d.state === "TASK_STATE_INPUT_REQUIRED")) {
    for (const k of feedChunks.keys()) if (k.startsWith((e.agent || "") + "/" + (e.taskId || "") + "/")) feedChunks.delete(k);
  }
  list.append(line);
  while (list.childElementCount > MAX_EVENTS) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

// --- start ---------------------------------------------------------------

// start reads the topology, the tasks and the events feed, again when
// the credentials change.
async function start() {
  await refreshTopology();
  refreshTasks();
  if (eventsOn && !topologyErr) openEvents();
  else {
    if (feed) feed.abort();
    $("events-status").textContent = topologyErr ? "not following: " + topologyErr : "no events feed (the gateway has no NATS server)";
  }
}

document.addEventListener("DOMContentLoaded", () => {
  setupCredentials();
  setupAsk();
  $("topology-refresh").addEventListener("click", refreshTopology);
  $("tasks-refresh").addEventListener("click", refreshTasks);
  $("tasks-filter").addEventListener("submit", (e) => { e.preventDefault(); refreshTasks(); });
  start();
  setInterval(refreshTopology, 10000);
  setInterval(() => { if (!ask.running) refreshTasks(); }, 5000);
});
