// DOM helpers. Run data only ever goes in with textContent (never innerHTML): a prompt,
// an argument or an answer is shown as the text it is, never run as markup.

export const $ = (id) => document.getElementById(id);

export function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

// A <select> of [value, label] pairs, in their order.
export function choices(cls, pairs) {
  const select = el("select", null, cls);
  for (const [value, label] of pairs) {
    const option = el("option", label);
    option.value = value;
    select.append(option);
  }
  return select;
}

// A text field (`tag`: textarea or input) with its hint and its bound.
export function field(tag, cls, placeholder, maxLength) {
  const node = el(tag, null, cls);
  node.placeholder = placeholder;
  node.maxLength = maxLength;
  return node;
}

// A form's submit button and the line under it that says how the submission went.
export function sendLine(label, cls) {
  const send = el("button", label, `${cls}-send`);
  send.type = "submit";
  return [send, el("p", null, `${cls}-status muted`)];
}

// A time with its zone: always UTC, labelled, to the second (the title gives the
// browser's local time with its offset).
export function when(iso) {
  if (!iso) return "";
  const at = new Date(iso);
  return `${at.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

export function timeEl(iso, cls) {
  const node = el("time", when(iso), cls);
  if (iso) {
    node.dateTime = iso;
    node.title = new Date(iso).toString();
  }
  return node;
}

export function notice(text, ok = false) {
  const box = $("notice");
  box.textContent = text;
  box.className = ok ? "ok" : "";
  box.hidden = !text;
}

export function show(section) {
  for (const id of ["signin", "inbox", "runs", "schedules", "run"]) {
    $(id).hidden = id !== section;
  }
}

// JSON as an operator reads it: indented; a string that holds JSON is unpacked first.
export function pretty(value) {
  if (typeof value === "string") {
    try {
      const inner = JSON.parse(value);
      if (inner !== null && typeof inner === "object") return JSON.stringify(inner, null, 2);
    } catch (_) { /* plain text */ }
    return value;
  }
  return JSON.stringify(value, null, 2);
}

// A collapsible block: <details><summary>label</summary><pre>…</pre></details>.
export function folded(label, value, cls, open = false) {
  const box = el("details", null, cls);
  box.open = open;
  box.append(el("summary", label), el("pre", pretty(value)));
  return box;
}

export function badge(text, kind) {
  return el("span", text, `badge ${kind || ""}`.trim());
}

// An effect class as a badge, coloured by how much care its call needs.
export function effectBadge(effect) {
  const known = ["READ_ONLY", "IDEMPOTENT_WRITE", "NON_IDEMPOTENT_WRITE"];
  return badge(effect || "effect unknown", `effect ${known.includes(effect) ? effect : ""}`);
}

export function money(cost) {
  return typeof cost === "number" ? `$${cost.toFixed(6)}` : "cost unknown";
}

export function spend(p) {
  return `${p.prompt_tokens ?? 0} prompt + ${p.completion_tokens ?? 0} completion tokens · ` +
    money(p.cost_usd);
}

// What a privacy level kept of a text: the text itself, or that it was withheld.
export function textOrWithheld(text, size, privacy, what, cls) {
  if (typeof text === "string") return el("div", text, `text ${cls}`);
  const n = typeof size === "number" ? ` (${size} characters)` : "";
  return el("div", `${what} withheld at privacy level ${privacy}${n}`, `muted withheld ${cls}`);
}
