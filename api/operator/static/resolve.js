// The resolution form for a write whose run ENDED with its outcome unknown (FAILED,
// attention "outcome_unknown"): once an operator has asked the target system, they record
// what it showed with an audited note (POST /runs/{id}/resolution, scope runs:resolve).
// Nothing runs again; the fence is emptied and the run leaves "Needs attention". calls.js
// calls resolveForm(run, after) where it shows the write, only for a principal whose
// token holds the scope (the API checks it again). Text only via textContent.
import { ApiError, explain, json } from "./api.js";
import { choices, el, field, notice, sendLine } from "./dom.js";

const RESOLVE_REFUSALS = {
  nothing_to_resolve: "The write was resolved already (or the run has none): nothing was " +
    "changed by yours. Refresh to see the run as it is now.",
  stale_resolution: "The run's write is another one now: refresh and look again.",
  run_not_found: "No such run, or it is not visible to you.",
};

function refusal(err) {
  return err instanceof ApiError && RESOLVE_REFUSALS[err.type]
    ? RESOLVE_REFUSALS[err.type] : explain(err);
}

// The form: what the target system shows (applied, not applied) and what was checked.
// `after(out)` runs once the resolution is recorded (the list re-reads the runs).
export function resolveForm(run, after) {
  const w = run.pending_write;
  const box = el("form", null, "resolve");
  box.dataset.fence = w.fence || "";
  box.append(el("h4", "Resolve: what did the target system show?"));
  const outcome = choices("resolve-outcome", [
    ["not_applied", "Not applied: no trace of the write"],
    ["applied", "Applied: the write happened"],
  ]);
  const note = field("textarea", "resolve-note",
    "what you checked, and where (required; kept in the audit event)", 2000);
  const [send, status] = sendLine("Record resolution", "resolve");
  box.append(outcome, note, send, status);
  note.addEventListener("input", () => { if (!send.disabled) status.textContent = ""; });
  box.addEventListener("submit", async (event) => {
    event.preventDefault();
    const said = note.value.trim();
    if (!said) {
      status.textContent = "Say what you checked: the note is the audit record.";
      return;
    }
    send.disabled = true;
    try {
      const out = await json(`/runs/${run.run_id}/resolution`, {
        method: "POST",
        body: { call_id: w.call_id, fence: w.fence, outcome: outcome.value, note: said },
      });
      status.textContent = `Resolved as ${out.outcome.replace("_", " ")} by ` +
        `${out.resolved_by}; the run stays ${out.run.status} and needs no more attention.`;
      notice(`Run ${run.run_id}: ${status.textContent}`, true);  // the card may go with it
      box.dataset.resolved = out.outcome;
      if (after) await after(out);
    } catch (err) {
      status.textContent = refusal(err);
      send.disabled = false;
    }
  });
  return box;
}
