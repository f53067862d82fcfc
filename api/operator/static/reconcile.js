// The answer form for a write whose outcome is unknown, on a run that waits for a person
// (AWAITING_RECONCILIATION): POST /runs/{id}/reconcile as the signed-in principal. Self-
// contained (its own request and messages) so the page around it may change; calls.js calls
// reconcileForm(run, may) where it shows the pending write. Text only via textContent
// (dom.js's helpers).
import { token } from "./api.js";
import { choices, el, field, sendLine } from "./dom.js";

const RECONCILE_REFUSALS = {
  already_reconciled: "Another operator answered first: nothing was changed by yours.",
  stale_reconciliation: "The run now waits on another write (or fence): refresh and look again.",
  not_awaiting_reconciliation: "The run no longer waits for an answer: refresh to see it.",
  forbidden: "Your token lacks the runs:reconcile scope.",
  unauthorized: "Your token is unknown, revoked or expired: sign in again.",
};

async function sendReconcile(runId, body) {
  const reply = await fetch(`/runs/${runId}/reconcile`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token()}`,
      "Content-Type": "application/json",
    },
    body: JSON.stringify(body),
  });
  let data = null;
  try { data = await reply.json(); } catch (_) { /* not JSON */ }
  if (reply.ok) return data;
  const type = data && data.error ? data.error.type : `http_${reply.status}`;
  const text = RECONCILE_REFUSALS[type] || (data && data.error ? data.error.message : type);
  throw new Error(text);
}

// The form: what the target system shows (applied with the result the model sees; not
// applied, then retry or an error result; give up), and a reason.
export function reconcileForm(run, may) {
  const w = run.pending_write;
  const box = el("form", null, "reconcile");
  box.dataset.fence = w.fence || "";
  box.append(el("h4", "What does the target system show?"));
  if (!may) {
    box.append(el("p", "You may read this run but not answer for its write " +
      "(no runs:reconcile scope).", "muted"));
    return box;
  }
  const choice = choices("reconcile-answer", [
    ["applied", "Applied"], ["not_applied:retry", "Not applied: retry the write"],
    ["not_applied:error", "Not applied: tell the model"], ["give_up", "Give up (the run fails)"],
  ]);
  const result = field("textarea", "reconcile-result",
    "applied: the result the model should see; not applied: the error", 50000);
  const reason = field("input", "reconcile-reason", "reason (kept in the audit event)", 2000);
  const [send, status] = sendLine("Record answer", "reconcile");
  box.append(choice, result, reason, send, status);
  box.addEventListener("submit", async (event) => {
    event.preventDefault();
    const [answer, then] = choice.value.split(":");
    const text = result.value.trim();
    if (answer === "applied" && !text) {
      status.textContent = "Give the result the model should see.";
      return;
    }
    send.disabled = true;
    try {
      const out = await sendReconcile(run.run_id, {
        call_id: w.call_id, fence: w.fence, answer, then: then || "retry",
        result: text || null, reason: reason.value.trim() || null,
      });
      status.textContent = `Answered ${answer.replace("_", " ")} as ${out.answered_by}; ` +
        `the run is ${out.run.status}.`;
      box.dataset.answered = answer;
    } catch (err) {
      status.textContent = err.message;
      send.disabled = false;
    }
  });
  return box;
}
