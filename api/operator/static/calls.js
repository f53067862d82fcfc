// A pending turn's calls, the decision buttons, and a write the run's fence holds.
import { json, explain, may } from "./api.js";
import { el, effectBadge, notice, pretty, timeEl, textOrWithheld } from "./dom.js";
import { reconcileForm } from "./reconcile.js";
import { resolveForm } from "./resolve.js";

// What the decider reads the calls against: the prompt and what the model said before them.
export function renderContext(run) {
  const p = run.pending_approval;
  const box = el("div", null, "context");
  box.append(el("div", "Prompt", "label"),
    textOrWithheld(p.prompt, null, run.privacy, "the prompt", "prompt"));
  if (p.said || p.content_withheld) {
    box.append(el("div", "The model said", "label"),
      textOrWithheld(p.said, null, run.privacy, "the model's text", "said"));
  }
  return box;
}

export function renderCalls(run) {
  const box = el("div");
  for (const call of run.pending_approval.calls) {
    const row = el("div", null, "call");
    row.dataset.effect = call.effect || "";
    row.append(el("strong", call.name), effectBadge(call.effect));
    row.append(renderArguments(run, call.arguments, call.arguments_size));
    box.append(row);
  }
  return box;
}

// Arguments as the API gives them: at the run's privacy level, or only their size.
export function renderArguments(run, args, size) {
  if (args !== null && args !== undefined) return el("pre", pretty(args), "arguments");
  return el("div", `arguments withheld at privacy level ${run.privacy}` +
    (size !== null && size !== undefined ? ` (${size} fields)` : ""), "muted");
}

// A write the run's fence holds (in flight, or interrupted with its outcome unknown): what
// an operator needs to ask the target system what became of it. `after` runs once an
// operator resolved it (the caller re-reads what it shows).
export function renderWrite(run, after) {
  const w = run.pending_write;
  const card = el("div", null, "card write");
  const title = w.state === "outcome_unknown"
    ? "Write interrupted: its outcome is unknown" : `Write in flight (${w.state})`;
  card.append(el("h3", title));
  const facts = el("dl");
  const rows = [["tool", w.tool], ["effect", w.effect || "unknown"], ["call id", w.call_id],
    ["idempotency key", w.idempotency_key], ["fence", w.state]];
  if (w.fence) rows.push(["fence id", w.fence]);
  for (const [k, v] of rows) {
    facts.append(el("dt", k), el("dd", v, `write-${k.replace(" ", "-")}`));
  }
  const since = el("dd", null, "write-since");
  if (w.since) since.append(timeEl(w.since));
  facts.append(el("dt", "since"), since);
  card.append(facts, renderArguments(run, w.arguments, w.arguments_size));
  if (run.status === "AWAITING_RECONCILIATION") {
    card.append(reconcileForm(run, may("runs:reconcile")));
  }
  if (run.attention === "outcome_unknown") {
    card.append(el("p", "Check the target system for this idempotency key before retrying " +
      "the request: the run failed, and the write may or may not have happened.", "muted"));
    if (may("runs:resolve")) card.append(resolveForm(run, after));
    else {
      card.append(el("p", "Once checked, someone with the runs:resolve scope records what " +
        "the target system showed.", "muted resolve-denied"));
    }
  }
  return card;
}

export function renderActions(run, after) {
  const box = el("div", null, "actions");
  if (!may("runs:decide")) {
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
