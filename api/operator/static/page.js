// The approvals page: vanilla JS over the operator API. Run data is only ever rendered
// with textContent (never innerHTML), and the token only ever travels in a header.
"use strict";

const KEY = "agentrt.token";
const $ = (id) => document.getElementById(id);
let me = null; // GET /me: {principal, scopes, may}
let follow = null; // the AbortController of the live event follow

class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

function token() {
  return sessionStorage.getItem(KEY);
}

async function api(path, options = {}) {
  const headers = { Authorization: `Bearer ${token()}`, ...(options.headers || {}) };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const reply = await fetch(path, {
    ...options,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (!reply.ok) {
    let type = "http_error", message = reply.statusText;
    try {
      const body = await reply.json();
      type = body.error.type;
      message = body.error.message;
    } catch (_) { /* not a typed error body */ }
    throw new ApiError(reply.status, type, message);
  }
  return reply;
}

async function json(path, options) {
  return (await api(path, options)).json();
}

// What an operator should read for each refusal of the API.
function explain(err) {
  if (!(err instanceof ApiError)) return `The API could not be reached: ${err.message}`;
  switch (err.type) {
    case "unauthorized":
      return "Your token is unknown, revoked or expired: sign in again.";
    case "forbidden":
      return `Refused: ${err.message}. Ask an admin for a token with that scope.`;
    case "already_decided":
    case "stale_turn":
    case "not_awaiting_approval":
      return "This turn was already decided (or is no longer the pending one): nothing was " +
        "changed. Refresh to see the run as it is now.";
    case "self_approval":
      return "Four-eyes: you started this run, so another principal must approve it.";
    case "run_not_found":
      return "No such run, or it is not visible to you.";
    default:
      return `Refused (${err.status} ${err.type}): ${err.message}`;
  }
}

function notice(text, ok = false) {
  const box = $("notice");
  box.textContent = text;
  box.className = ok ? "ok" : "";
  box.hidden = !text;
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "";
}

function mayDecide() {
  return me !== null && me.may.includes("runs:decide");
}

function show(section) {
  for (const id of ["signin", "inbox", "run"]) $(id).hidden = id !== section;
}

// --- pending calls and the decision buttons ----------------------------------------------

function renderCalls(run) {
  const box = el("div");
  for (const call of run.pending_approval.calls) {
    const row = el("div", null, "call");
    row.append(el("strong", call.name));
    if (call.effect) row.append(el("span", ` ${call.effect}`, "effect"));
    row.append(renderArguments(run, call.arguments, call.arguments_size));
    box.append(row);
  }
  return box;
}

// Arguments as the API gives them: at the run's privacy level, or only their size.
function renderArguments(run, args, size) {
  if (args !== null && args !== undefined) {
    return el("pre", JSON.stringify(args, null, 2), "arguments");
  }
  return el("div", `arguments withheld at privacy level ${run.privacy}` +
    (size !== null && size !== undefined ? ` (${size} fields)` : ""), "muted");
}

// A write the run's fence holds (in flight, or interrupted with its outcome unknown): what
// an operator needs to ask the target system what became of it.
function renderWrite(run) {
  const w = run.pending_write;
  const card = el("div", null, "card write");
  const title = w.state === "outcome_unknown"
    ? "Write interrupted: its outcome is unknown" : `Write in flight (${w.state})`;
  card.append(el("h3", title));
  const facts = el("dl");
  const rows = [["tool", w.tool], ["effect", w.effect || "unknown"], ["call id", w.call_id],
    ["idempotency key", w.idempotency_key], ["fence", w.state], ["since", when(w.since)]];
  if (w.fence) rows.push(["fence id", w.fence]);
  for (const [k, v] of rows) {
    facts.append(el("dt", k), el("dd", v, `write-${k.replace(" ", "-")}`));
  }
  card.append(facts, renderArguments(run, w.arguments, w.arguments_size));
  if (run.status === "AWAITING_RECONCILIATION" && typeof reconcileForm === "function") {
    card.append(reconcileForm(run, Boolean(me && me.may.includes("runs:reconcile"))));
  }
  if (run.attention === "outcome_unknown") {
    card.append(el("p", "Check the target system for this idempotency key before retrying " +
      "the request: the run failed, and the write may or may not have happened.", "muted"));
  }
  return card;
}

function renderActions(run, after) {
  const box = el("div", null, "actions");
  if (!mayDecide()) {
    box.append(el("span", "You may read this run but not decide it (no runs:decide scope).",
      "muted"));
    return box;
  }
  const reason = el("input");
  reason.placeholder = "reason (required to deny)";
  reason.maxLength = 2000;
  reason.className = "reason";
  const approve = el("button", "Approve", "approve");
  const deny = el("button", "Deny", "deny");
  const digest = run.pending_approval.turn_digest;
  const send = async (verdict) => {
    const why = reason.value.trim();
    if (verdict === "deny" && !why) {
      notice("Give a reason to deny.");
      return;
    }
    approve.disabled = deny.disabled = true;
    try {
      const out = await json(`/runs/${run.run_id}/decision`, {
        method: "POST",
        body: { verdict, turn_digest: digest, reason: why || null },
      });
      notice(`${verdict === "approve" ? "Approved" : "Denied"} as ${out.decided_by}.`, true);
      await after();
    } catch (err) {
      notice(explain(err));
      approve.disabled = deny.disabled = false;
    }
  };
  approve.addEventListener("click", () => send("approve"));
  deny.addEventListener("click", () => send("deny"));
  box.append(approve, reason, deny);
  return box;
}

// --- the inbox ---------------------------------------------------------------------------

async function showInbox() {
  stopFollow();
  show("inbox");
  const list = $("inbox-list");
  const listed = await listRuns(list, "/inbox?limit=200", "inbox-empty", (run, card) => {
    const p = run.pending_approval;
    card.append(el("div",
      `${run.profile} · started by ${run.initiator} · round ${p.round} · waiting since ` +
      when(p.requested_at), "muted"));
    card.append(renderCalls(run), renderActions(run, showInbox));
  });
  if (listed) await showAttention();
}

// One card per run of a list (the inbox, the attention list): a title linking to the run,
// then what `fill` adds. False when the list could not be read (the notice says why).
async function listRuns(list, path, emptyId, fill) {
  list.replaceChildren();
  let runs;
  try {
    runs = await json(path);
  } catch (err) {
    notice(explain(err));
    return false;
  }
  $(emptyId).hidden = runs.length > 0;
  for (const run of runs) {
    const card = el("div", null, "card");
    card.dataset.run = run.run_id;
    const title = el("h3");
    const link = el("a", run.run_id);
    link.href = `#/runs/${run.run_id}`;
    title.append(link);
    card.append(title);
    fill(run, card);
    list.append(card);
  }
  return true;
}

// Runs that need an operator (GET /attention): failed with a write's outcome unknown, or
// waiting for an operator's answer on such a write (with the answer form).
async function showAttention() {
  const list = $("attention-list");
  await listRuns(list, "/attention?limit=200", "attention-empty", (run, card) => {
    card.append(el("div",
      `${run.profile} · started by ${run.initiator} · ${run.status} (${run.attention})` +
      (run.finished_at ? ` · ${when(run.finished_at)}` : ""), "muted"));
    if (run.pending_write) card.append(renderWrite(run));
  });
}

// --- a run and its live events -----------------------------------------------------------

function stopFollow() {
  if (follow) follow.abort();
  follow = null;
}

function renderRun(run) {
  $("run-id").textContent = run.run_id;
  const facts = $("run-facts");
  facts.replaceChildren();
  const rows = [["status", run.status], ["profile", run.profile], ["initiator", run.initiator],
    ["privacy", run.privacy], ["rounds", run.iterations], ["started", when(run.created_at)]];
  if (run.termination_reason) rows.push(["reason", run.termination_reason]);
  if (run.finished_at) rows.push(["finished", when(run.finished_at)]);
  if (run.cost_usd !== null && run.cost_usd !== undefined) {
    rows.push(["cost", `$${run.cost_usd.toFixed(6)}`]);
  }
  if (run.attention) rows.push(["attention", run.attention]);
  if (run.answer) rows.push(["answer", run.answer]);
  for (const [k, v] of rows) {
    facts.append(el("dt", k), el("dd", v, `fact-${k}`));
  }
  const pending = $("run-pending");
  pending.replaceChildren();
  if (run.pending_approval) {
    const card = el("div", null, "card");
    card.dataset.run = run.run_id;
    card.append(el("h3", `Pending turn, round ${run.pending_approval.round}`));
    card.append(renderCalls(run), renderActions(run, () => refreshRun(run.run_id)));
    pending.append(card);
  }
  if (run.pending_write) pending.append(renderWrite(run));
}

async function refreshRun(runId) {
  try {
    renderRun(await json(`/runs/${runId}`));
  } catch (err) {
    notice(explain(err));
  }
}

function renderEvent(e) {
  const item = el("li");
  item.dataset.kind = e.kind;
  item.append(el("span", e.kind, "kind"),
    el("span", ` round ${e.round} · ${new Date(e.created_at).toLocaleTimeString()} `, "muted"));
  const shown = { ...e.payload };
  if (Object.keys(shown).length) item.append(el("pre", JSON.stringify(shown)));
  $("events").append(item);
}

// fetch() streaming of the SSE endpoint: EventSource cannot send the Authorization header.
async function followEvents(runId, signal) {
  let last = -1;
  const live = $("live");
  while (!signal.aborted) {
    try {
      const reply = await api(`/runs/${runId}/events`, {
        headers: { Accept: "text/event-stream", "Last-Event-ID": String(last) },
        signal,
      });
      live.textContent = "● live";
      const reader = reply.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let kind = "message", data = "", id = null;
          for (const line of frame.split("\n")) {
            if (line.startsWith("event: ")) kind = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
            else if (line.startsWith("id: ")) id = Number(line.slice(4));
          }
          if (!data) continue;
          // The token was revoked or expired: the stream closes, and the reconnect's 401
          // says so.
          if (kind === "error") continue;
          if (kind === "end") {
            live.textContent = "(run ended)";
            await refreshRun(runId);
            return;
          }
          if (id !== null) last = id;
          renderEvent(JSON.parse(data));
          await refreshRun(runId);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError) {
        notice(explain(err));
        return;
      }
    }
    live.textContent = "reconnecting…";
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function showRun(runId) {
  stopFollow();
  show("run");
  $("events").replaceChildren();
  $("live").textContent = "";
  await refreshRun(runId);
  follow = new AbortController();
  followEvents(runId, follow.signal);
}

// --- sign-in and routing -----------------------------------------------------------------

async function signIn(secret) {
  sessionStorage.setItem(KEY, secret);
  try {
    me = await json("/me");
  } catch (err) {
    sessionStorage.removeItem(KEY);
    me = null;
    notice(explain(err));
    return false;
  }
  $("who").textContent = `${me.principal} · ${me.may.join(" ")}`;
  $("who").hidden = $("signout").hidden = false;
  return true;
}

async function route() {
  if (!token() || me === null) {
    stopFollow();
    show("signin");
    return;
  }
  const m = location.hash.match(/^#\/runs\/([0-9a-fA-F-]{36})$/);
  if (m) await showRun(m[1]);
  else await showInbox();
}

document.addEventListener("DOMContentLoaded", async () => {
  $("signin-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    notice("");
    if (await signIn($("token").value.trim())) {
      $("token").value = "";
      await route();
    }
  });
  $("signout").addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    me = null;
    $("who").hidden = $("signout").hidden = true;
    notice("");
    route();
  });
  $("refresh").addEventListener("click", () => { notice(""); showInbox(); });
  window.addEventListener("hashchange", () => { notice(""); route(); });
  if (token()) await signIn(token());
  await route();
});
