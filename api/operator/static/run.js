// A run's page: its facts, what it waits for or why it failed, and its timeline, followed
// live over the SSE endpoint.
import { api, explain, json, ApiError } from "./api.js";
import { renderActions, renderCalls, renderContext, renderWrite } from "./calls.js";
import { $, el, money, notice, show, timeEl } from "./dom.js";
import { renderEvent, renderFailure } from "./timeline.js";

let follow = null; // the AbortController of the live follow
let privacy = "metadata"; // the shown run's level, until it is read (fail closed)

// Frames of the SSE stream other than events (`event: <kind>`), by kind: a module that
// shows more of a run live (e.g. a model's text as it is written) registers its handler
// here: handler(data, runId).
export const frameHandlers = {};

export function stopFollow() {
  if (follow) follow.abort();
  follow = null;
}

function renderRun(run) {
  privacy = run.privacy;
  $("run-id").textContent = run.run_id;
  const facts = $("run-facts");
  facts.replaceChildren();
  const rows = [["status", run.status], ["profile", run.profile], ["initiator", run.initiator],
    ["privacy", run.privacy], ["rounds", run.iterations],
    ["tokens", `${run.prompt_tokens} prompt + ${run.completion_tokens} completion`],
    ["started", timeEl(run.created_at)]];
  if (run.termination_reason) rows.push(["reason", run.termination_reason]);
  if (run.finished_at) rows.push(["finished", timeEl(run.finished_at)]);
  // The spend so far while it waits (each pause records it), the total once it ended.
  if (run.status !== "RUNNING" && run.status !== "STARTING") {
    rows.push(["cost", money(run.cost_usd)]);
  }
  if (run.attention) rows.push(["attention", run.attention]);
  for (const [k, v] of rows) {
    const dd = el("dd", null, `fact-${k}`);
    if (v instanceof Node) dd.append(v);
    else dd.textContent = String(v);
    facts.append(el("dt", k), dd);
  }
  const pending = $("run-pending");
  pending.replaceChildren();
  if (run.failure) pending.append(renderFailure(run));
  if (run.answer !== null && run.answer !== undefined) {
    const box = el("div", null, "card answer-card");
    box.append(el("h3", "Answer"), el("div", run.answer, "text answer fact-answer"));
    pending.append(box);
  }
  if (run.pending_approval) {
    const card = el("div", null, "card");
    card.dataset.run = run.run_id;
    card.append(el("h3", `Pending turn, round ${run.pending_approval.round}`));
    card.append(renderContext(run), renderCalls(run),
      renderActions(run, () => refreshRun(run.run_id)));
    pending.append(card);
  }
  if (run.pending_write) pending.append(renderWrite(run, () => refreshRun(run.run_id)));
}

async function refreshRun(runId) {
  try {
    renderRun(await json(`/runs/${runId}`));
  } catch (err) {
    notice(explain(err));
  }
}

function addEvent(e) {
  const list = $("events");
  // The turn's text as it was written (live.js) gives way to the committed turn.
  const writing = list.querySelector(`li[data-writing="${e.sequence}"]`);
  if (writing) writing.remove();
  if (list.querySelector(`li[data-sequence="${e.sequence}"]`)) return; // a resumed follow
  // Events come in commit order; one committed late (a parallel call, a reconciled write)
  // has a lower sequence than some shown already: it goes in its place in the timeline.
  const item = renderEvent(e, privacy);
  const later = [...list.querySelectorAll("li[data-sequence]")].find(
    (li) => Number(li.dataset.sequence) > e.sequence);
  if (later) list.insertBefore(item, later);
  else list.append(item);
}

// fetch() streaming of the SSE endpoint: EventSource cannot send the Authorization header.
async function followEvents(runId, signal) {
  let last = "-1:0"; // `<event position>:<live id>`: the live follow's resume point
  const live = $("live");
  while (!signal.aborted) {
    try {
      const reply = await api(`/runs/${runId}/live`, {
        headers: { Accept: "text/event-stream", "Last-Event-ID": last },
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
            else if (line.startsWith("id: ")) id = line.slice(4);
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
          if (frameHandlers[kind]) {
            frameHandlers[kind](JSON.parse(data), runId);
            continue;
          }
          addEvent(JSON.parse(data));
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

export async function showRun(runId) {
  stopFollow();
  show("run");
  $("events").replaceChildren();
  $("run-pending").replaceChildren();
  $("live").textContent = "";
  await refreshRun(runId);
  follow = new AbortController();
  followEvents(runId, follow.signal);
}
