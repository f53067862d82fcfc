// The run lists: the inbox (GET /inbox), needs attention (GET /attention) and every run
// (GET /runs), the last filtered by status, profile and whether a run needs an operator.
import { explain, json } from "./api.js";
import { renderActions, renderCalls, renderContext, renderWrite } from "./calls.js";
import { $, el, notice, show, timeEl } from "./dom.js";

function card(run) {
  const box = el("div", null, "card");
  box.dataset.run = run.run_id;
  const title = el("h3");
  const link = el("a", run.run_id);
  link.href = `#/runs/${run.run_id}`;
  title.append(link);
  box.append(title);
  return box;
}

// One card per run of a list, then what `fill` adds. False when the list could not be read
// (the notice says why).
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
    const box = card(run);
    try {
      fill(run, box);
    } catch (err) {
      // One run the page cannot draw (a shape it does not expect) costs its own card, not
      // the list: a TypeError on the first run once left the whole inbox, and the
      // attention list after it, empty.
      box.append(el("p", `This run could not be shown here (${err.message}): open it.`,
        "muted unshown"));
    }
    list.append(box);
  }
  return true;
}

function line(run, ...parts) {
  const row = el("div", `${run.profile} · started by ${run.initiator} · `, "muted");
  row.append(...parts);
  return row;
}

export async function showInbox(stop) {
  stop();
  show("inbox");
  const listed = await listRuns($("inbox-list"), "/inbox?limit=200", "inbox-empty",
    (run, box) => {
      const p = run.pending_approval;
      if (!p) {  // waiting, with no turn recorded to decide: nothing to approve from here
        box.append(line(run, "waiting for approval; no pending turn is recorded"));
        return;
      }
      box.append(line(run, `round ${p.round} · waiting since `, timeEl(p.requested_at)));
      box.append(renderContext(run), renderCalls(run),
        renderActions(run, () => showInbox(stop)));
    });
  if (listed) await showAttention();
}

// Runs that need an operator (GET /attention): today, failed with a write's outcome
// unknown.
async function showAttention() {
  await listRuns($("attention-list"), "/attention?limit=200", "attention-empty", (run, box) => {
    const row = line(run, `${run.status} (${run.attention})`);
    if (run.finished_at) row.append(" · ", timeEl(run.finished_at));
    box.append(row);
    if (run.pending_write) box.append(renderWrite(run, () => showAttention()));
  });
}

// --- every run, filtered ---------------------------------------------------------------

// The filters live in the hash (#/runs?status=FAILED&profile=x&attention=1), so a filtered
// list is a link an operator can share.
export function filtersOf(hash) {
  const at = hash.indexOf("?");
  return new URLSearchParams(at >= 0 ? hash.slice(at + 1) : "");
}

function query(filters, cursor) {
  const q = new URLSearchParams({ limit: "50" });
  for (const key of ["status", "profile"]) {
    if (filters.get(key)) q.set(key, filters.get(key));
  }
  if (filters.get("attention") === "1") q.set("attention", "true");
  if (cursor) q.set("cursor", cursor);
  return `/runs?${q}`;
}

function row(run) {
  const tr = el("tr");
  tr.dataset.run = run.run_id;
  tr.dataset.status = run.status;
  const link = el("a", run.run_id.slice(0, 8));
  link.href = `#/runs/${run.run_id}`;
  link.title = run.run_id;
  const created = el("td");
  created.append(timeEl(run.created_at));
  const why = run.failure ? run.failure.summary
    : (run.attention ? run.attention : (run.termination_reason || ""));
  const first = el("td");
  first.append(link);
  tr.append(first, el("td", run.status, `status ${run.status}`), el("td", run.profile),
    el("td", run.initiator), created, el("td", why, "why"));
  return tr;
}

// Each showing of the list is a generation: a page fetched for an earlier one (the filter
// changed, the route was shown twice) is dropped, never appended beside the newer one's.
let runsShown = 0;

export async function showRuns(stop, filters) {
  stop();
  show("runs");
  const generation = ++runsShown;
  $("f-status").value = filters.get("status") || "";
  $("f-profile").value = filters.get("profile") || "";
  $("f-attention").checked = filters.get("attention") === "1";
  const body = $("runs-body");
  body.replaceChildren();
  $("runs-more").hidden = true;
  await morePage(filters, null, generation);
}

async function morePage(filters, cursor, generation) {
  let page;
  try {
    page = await json(query(filters, cursor));
  } catch (err) {
    if (generation === runsShown) notice(explain(err));
    return;
  }
  if (generation !== runsShown) return;
  $("runs-body").append(...page.runs.map(row));
  $("runs-empty").hidden = $("runs-body").children.length > 0;
  const more = $("runs-more");
  more.hidden = !page.next_cursor;
  more.onclick = () => morePage(filters, page.next_cursor, generation);
}

// The filter form writes the hash; the router reads it back (one path for links and form).
export function wireFilters() {
  $("runs-filter").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    if ($("f-status").value) q.set("status", $("f-status").value);
    if ($("f-profile").value.trim()) q.set("profile", $("f-profile").value.trim());
    if ($("f-attention").checked) q.set("attention", "1");
    const target = `#/runs${q.toString() ? `?${q}` : ""}`;
    if (location.hash === target) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else location.hash = target;
  });
}
