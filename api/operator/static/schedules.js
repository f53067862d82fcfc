// Schedules of runs (GET /schedules): each with its profile, spec, overlap policy, state,
// creator, next fire and recent runs; a principal with schedules:manage (and runs:start)
// pauses, resumes and triggers one here. The API checks the scopes and grants again.
import { api, explain, json, may } from "./api.js";
import { $, el, notice, show, timeEl } from "./dom.js";

async function act(schedule, verb) {
  notice("");
  try {
    await api(`/schedules/${encodeURIComponent(schedule.name)}/${verb}`, { method: "POST" });
    notice(`Schedule ${schedule.name}: ${verb === "trigger" ? "fired once" : `${verb}d`}.`, true);
  } catch (err) {
    notice(explain(err));
  }
  await showSchedules();
}

function buttons(schedule) {
  const cell = el("td", null, "actions");
  if (!may("schedules:manage")) return cell;
  const toggle = schedule.paused ? "resume" : "pause";
  const flip = el("button", schedule.paused ? "Resume" : "Pause", toggle);
  flip.type = "button";
  flip.addEventListener("click", () => act(schedule, toggle));
  const fire = el("button", "Trigger", "trigger");
  fire.type = "button";
  fire.title = "fire once now (under the schedule's overlap policy)";
  fire.addEventListener("click", () => act(schedule, "trigger"));
  cell.append(flip, fire);
  return cell;
}

function recent(schedule) {
  const cell = el("td");
  for (const runId of schedule.recent_runs.slice(-3)) {
    const link = el("a", runId.slice(0, 8));
    link.href = `#/runs/${runId}`;
    link.title = runId;
    cell.append(link, " ");
  }
  if (schedule.recent_runs.length === 0) cell.textContent = "none yet";
  return cell;
}

function row(schedule) {
  const tr = el("tr");
  tr.dataset.schedule = schedule.name;
  tr.dataset.paused = String(schedule.paused);
  const next = el("td");
  if (!schedule.paused && schedule.next_fires.length) next.append(timeEl(schedule.next_fires[0]));
  const state = schedule.paused ? "paused" : "active";
  tr.append(el("td", schedule.name), el("td", schedule.profile), el("td", schedule.spec),
    el("td", schedule.overlap), el("td", state, `state ${state}`),
    el("td", schedule.created_by), next, recent(schedule), buttons(schedule));
  return tr;
}

export async function showSchedules(stop) {
  if (stop) stop();
  show("schedules");
  let listed;
  try {
    listed = await json("/schedules");
  } catch (err) {
    notice(explain(err));
    return;
  }
  $("schedules-body").replaceChildren(...listed.schedules.map(row));
  $("schedules-empty").hidden = listed.schedules.length > 0;
}
