// The approvals page: vanilla JS modules over the operator API, no framework and nothing
// fetched from elsewhere. This module signs in and routes; api.js calls the API, dom.js
// builds nodes (textContent only, never innerHTML), lists.js the inbox and the runs list,
// run.js a run's page and timeline.js its events.
import { api, json, explain, keepToken, may, session, token } from "./api.js";
import { $, notice, show } from "./dom.js";
import { filtersOf, showInbox, showRuns, wireFilters } from "./lists.js";
import { showRun, stopFollow } from "./run.js";
import { showSchedules } from "./schedules.js";
import "./live.js"; // the model's text as it is written, on a run's page

async function signIn(secret) {
  keepToken(secret);
  try {
    session.me = await json("/me");
  } catch (err) {
    keepToken(null);
    session.me = null;
    notice(explain(err));
    return false;
  }
  $("who").textContent = `${session.me.principal} · ${session.me.may.join(" ")}`;
  $("who").hidden = $("signout").hidden = $("nav").hidden = false;
  $("nav-schedules").hidden = !may("schedules:read");
  // The session Temporal Web's codec (/codec) is authorised by: an HttpOnly cookie, so
  // nobody pastes a token into Temporal Web. Reading runs here does not depend on it.
  try {
    await api("/me/session", { method: "POST" });
  } catch (_) { /* Temporal Web then shows payloads encoded; this page works on */ }
  return true;
}

async function route() {
  if (!token() || session.me === null) {
    stopFollow();
    show("signin");
    return;
  }
  const hash = location.hash;
  const m = hash.match(/^#\/runs\/([0-9a-fA-F-]{36})$/);
  if (m) await showRun(m[1]);
  else if (hash === "#/runs" || hash.startsWith("#/runs?")) await showRuns(stopFollow, filtersOf(hash));
  else if (hash === "#/schedules") await showSchedules(stopFollow);
  else await showInbox(stopFollow);
}

async function start() {
  $("signin-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    notice("");
    if (await signIn($("token").value.trim())) {
      $("token").value = "";
      await route();
    }
  });
  $("signout").addEventListener("click", () => {
    fetch("/codec/session", { method: "DELETE" }).catch(() => {});
    keepToken(null);
    session.me = null;
    $("who").hidden = $("signout").hidden = $("nav").hidden = true;
    notice("");
    route();
  });
  $("refresh").addEventListener("click", () => { notice(""); showInbox(stopFollow); });
  $("schedules-refresh").addEventListener("click", () => { notice(""); showSchedules(); });
  wireFilters();
  window.addEventListener("hashchange", () => { notice(""); route(); });
  if (token()) await signIn(token());
  await route();
}

// A module runs after the document is parsed (deferred), so the elements are there.
start();
