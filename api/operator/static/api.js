// The operator API as the page calls it: the token from sessionStorage in a bearer header
// (never in a URL), and each refusal of the API in words an operator can act on.

const KEY = "agentrt.token";

export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

export function token() {
  return sessionStorage.getItem(KEY);
}

export function keepToken(secret) {
  if (secret === null) sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, secret);
}

export async function api(path, options = {}) {
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

export async function json(path, options) {
  return (await api(path, options)).json();
}

// What an operator should read for each refusal of the API.
export function explain(err) {
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

// Who is signed in (GET /me: {principal, scopes, may}); the page shows buttons by it and the
// API checks the scopes again.
export const session = { me: null };

export function may(scope) {
  return session.me !== null && session.me.may.includes(scope);
}
