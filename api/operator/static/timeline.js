// A run's events as a timeline an operator reads top to bottom: the prompt, what the model
// said and asked for, each tool call (effect badge, arguments and result folded), the
// decisions and who made them, the answer with its spend, or why the run failed.
// Payloads are shown as the run's privacy level kept them: metadata/none keep no text.
import { badge, el, effectBadge, folded, spend, textOrWithheld, timeEl } from "./dom.js";

const LABELS = {
  run_started: "Prompt",
  llm: "Model",
  tool: "Tool call",
  approval_requested: "Waiting for approval",
  approval: "Decision",
  decision_refused: "Decision refused",
  policy_decision: "Policy",
  reconcile_requested: "Waiting for an answer on a write",
  reconciled: "Write answered",
  output_invalid: "Answer rejected",
  input_requested: "Asked the user",
  input: "User input",
  cancel: "Cancelled",
  run_completed: "Answer",
  run_failed: "Failed",
};

const UNAUTHENTICATED = "unauthenticated:";

function decider(p) {
  const who = String(p.decided_by ?? "?");
  return who.startsWith(UNAUTHENTICATED)
    ? `${who.slice(UNAUTHENTICATED.length)} (unauthenticated)` : who;
}

// Content that a privacy level may have withheld: `key` itself, or `key_size`.
function content(p, key, privacy, what, cls) {
  return textOrWithheld(p[key], p[`${key}_size`], privacy, what, cls);
}

function folding(p, key, privacy, label, cls) {
  if (key in p) return folded(label, p[key], cls);
  const size = p[`${key}_size`];
  return el("div", `${label} withheld at privacy level ${privacy}` +
    (typeof size === "number" ? ` (${size})` : ""), `muted withheld ${cls}`);
}

const BODIES = {
  run_started(p, privacy) {
    return [el("div", `${p.profile} · started by ${p.initiator}`, "muted"),
      content(p, "prompt", privacy, "the prompt", "prompt")];
  },
  llm(p, privacy) {
    const out = [];
    if (p.content || p.content_withheld) {
      out.push(content(p, "content", privacy, "the model's text", "said"));
    }
    const calls = Array.isArray(p.tool_calls) ? p.tool_calls.map((c) => c.name)
      : (p.tool_names || []);
    if (calls.length) out.push(el("div", `asks to call: ${calls.join(", ")}`, "asks"));
    if (p.input_required) out.push(el("div", "asks the user for more information", "asks"));
    out.push(el("div", `${p.model ?? ""} · ${spend(p)}`, "muted spend"));
    return out;
  },
  tool(p, privacy) {
    const head = el("div", null, "call");
    head.append(el("strong", p.tool), effectBadge(p.effect));
    if (p.is_error) head.append(badge("error", "error"));
    return [head, folding(p, "arguments", privacy, "arguments", "arguments"),
      folding(p, "result", privacy, "result", "result")];
  },
  approval_requested(p) {
    const tools = p.tools || p.tool_names || [];
    return [el("div", `of ${tools.join(", ")} (turn ${String(p.turn_digest ?? "").slice(0, 12)})`,
      "muted")];
  },
  approval(p) {
    const verdict = p.approved ? "Approved" : "Denied";
    const part = p.partial ? " (one of the people the policy asks for; the run still waits)" : "";
    const out = [el("div", `${verdict} by ${decider(p)}${part}`,
      `verdict ${p.approved ? "ok" : "no"}`)];
    if (p.reason) out.push(el("div", `Reason: ${p.reason}`, "text reason"));
    return out;
  },
  reconcile_requested(p) {
    return [el("div", `${p.tool} (call ${p.call_id}) was interrupted and its probe could not ` +
      "say what happened: a person answers what the target system shows.", "write-call")];
  },
  reconciled(p) {
    const said = {
      applied: "applied",
      not_applied: p.then === "error" ? "not applied; the model is told it failed"
        : "not applied; run it again under the same idempotency key",
      give_up: "given up; the run fails",
    }[p.answer] || String(p.answer);
    const who = p.authenticated === false ? `${p.answered_by} (unauthenticated)` : p.answered_by;
    const out = [el("div", `${p.tool} (call ${p.call_id}): ${said}`, "verdict answer"),
      el("div", `answered by ${who ?? "?"}` + (p.fence ? ` · fence ${p.fence}` : ""), "muted")];
    if (p.reason) out.push(el("div", `Reason: ${p.reason}`, "text reason"));
    return out;
  },
  output_invalid(p, privacy) {
    const checks = (p.checks || []).map((c) =>
      c.rule === "json" ? "not JSON" : `${c.rule} at ${c.schema_path || "(root)"}`);
    return [el("div", `failed the output schema: ${checks.join("; ") || "invalid"}`, "checks"),
      content(p, "content", privacy, "the validator's words", "why")];
  },
  policy_decision(p) {
    const people = p.approvers === 1 ? "one person" : `${p.approvers} distinct people`;
    const why = p.errored ? "could not decide; asks a person" : `asks ${people} to approve`;
    return [el("div", `${p.decided_by ?? "a policy"} ${why}`, "verdict policy"),
      el("div", `Reason: ${p.reason ?? ""}`, "text reason")];
  },
  decision_refused(p) {
    const what = p.approved ? "An approval" : "A denial";
    return [el("div", `${what} by ${decider(p)} was refused: ${p.attestation} attestation`)];
  },
  input(p, privacy) {
    return [el("div", `from ${p.sent_by ?? "?"}`, "muted"),
      content(p, "content", privacy, "the input", "input")];
  },
  cancel(p) {
    return [el("div", `by ${p.by ?? "?"}` + (p.note ? `: ${p.note}` : ""))];
  },
  run_completed(p, privacy) {
    return [content(p, "answer", privacy, "the answer", "answer"),
      el("div", `${p.reason} · ${p.iterations} round(s) · ${spend(p)}`, "muted spend")];
  },
  run_failed(p) {
    const out = [el("div", `${p.status} (${p.reason})` +
      (p.error_type ? ` · ${p.error_type}` : ""), "code")];
    if (p.error) out.push(el("div", p.error, "text error-detail"));
    out.push(el("div", spend(p), "muted spend"));
    return out;
  },
};

export function renderEvent(e, privacy) {
  const item = el("li", null, `entry ${e.kind}`);
  item.dataset.kind = e.kind;
  item.dataset.sequence = e.sequence;
  const head = el("div", null, "head");
  head.append(el("span", LABELS[e.kind] || e.kind, "kind"),
    el("span", ` round ${e.round} · `, "muted"), timeEl(e.created_at, "muted"));
  if (e.duration_ms !== null && e.duration_ms !== undefined) {
    head.append(el("span", ` · ${Math.round(e.duration_ms)} ms`, "muted"));
  }
  item.append(head);
  const body = BODIES[e.kind];
  if (body) item.append(...body(e.payload, privacy));
  else if (Object.keys(e.payload).length) item.append(facts(e.payload));
  return item;
}

// An event of a kind this page has no words for: its fields as a list an operator reads,
// a nested value folded (never one line of raw JSON).
function facts(payload) {
  const list = el("dl", null, "payload facts");
  for (const [key, value] of Object.entries(payload)) {
    const dd = el("dd");
    if (value !== null && typeof value === "object") dd.append(folded("show", value));
    else dd.textContent = String(value);
    list.append(el("dt", key.replaceAll("_", " ")), dd);
  }
  return list;
}

// A failed (or cancelled) run's reason in words and what to do about it (RunOut.failure).
export function renderFailure(run) {
  const f = run.failure;
  const box = el("div", null, "card failure");
  box.append(el("h3", run.status === "CANCELLED" ? "Cancelled" : "Failed"),
    el("p", f.summary, "failure-summary"));
  if (f.detail) box.append(el("p", f.detail, "failure-detail"));
  box.append(el("p", `What to do: ${f.action}`, "failure-action"),
    el("div", `reason ${f.reason ?? "unknown"}` + (f.error_type ? ` · ${f.error_type}` : ""),
      "muted failure-code"));
  return box;
}

