// The model's text as it is written: the live follow's `delta` frames in a "writing…"
// entry per turn, emptied by a `retract` (a retried call withdrew it), and replaced by the
// turn's committed event when it comes (run.js addEvent).
import { frameHandlers } from "./run.js";
import { $, el } from "./dom.js";

function writing(sequence) {
  const list = $("events");
  let item = list.querySelector(`li[data-writing="${sequence}"]`);
  if (!item) {
    item = el("li", null, "entry writing");
    item.dataset.writing = String(sequence);
    const head = el("div", null, "head");
    head.append(el("span", "writing…", "kind"));
    item.append(head, el("div", "", "text live-text"));
    list.append(item);
  }
  return item.querySelector(".live-text");
}

frameHandlers.delta = (d) => {
  const text = writing(d.sequence);
  text.textContent += d.text;
};

frameHandlers.retract = (d) => {
  writing(d.sequence).textContent = "";
};
