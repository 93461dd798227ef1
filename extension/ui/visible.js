// Text a person must read exactly (an approval's parameters and element line): characters that
// draw nothing or reorder the text around them (a right-to-left override, a zero-width space, a
// tag character) are shown as markers such as ⟨U+202E⟩, so they cannot hide or rearrange what
// the card shows. Everything else is kept as typed. The characters are the host's
// (protocol/visible_text.py, generated into UI.invisibleRanges), so the REPL marks the same ones.
import { UI } from "../generated/protocol.js";
import { h } from "./dom.js";

const hex = (code) => code.toString(16).toUpperCase().padStart(4, "0");
const INVISIBLE = new RegExp(`[${UI.invisibleRanges.map(([start, end]) =>
  start === end ? `\\u{${hex(start)}}` : `\\u{${hex(start)}}-\\u{${hex(end)}}`).join("")}]`, "u");

export function marker(char) {
  return `⟨U+${hex(char.codePointAt(0))}⟩`;
}

// `text` as one string with every invisible character replaced by its marker (for one-line
// summaries, where no element can be placed).
export function visibleString(text) {
  return String(text).replace(new RegExp(INVISIBLE.source, "gu"), marker);
}

// `text` as nodes: text nodes for what is typed, a marked span for each invisible character.
export function visibleNodes(text) {
  const nodes = [];
  let rest = String(text);
  for (let found = INVISIBLE.exec(rest); found; found = INVISIBLE.exec(rest)) {
    if (found.index) nodes.push(document.createTextNode(rest.slice(0, found.index)));
    nodes.push(h("span", { class: "invisible-char", title: `U+${hex(found[0].codePointAt(0))}`, text: marker(found[0]) }));
    rest = rest.slice(found.index + found[0].length);
  }
  if (rest || !nodes.length) nodes.push(document.createTextNode(rest));
  return nodes;
}

// Put `text` into `el` as visible nodes (replacing what it held); returns `el`.
export function setVisibleText(el, text) {
  el.replaceChildren(...visibleNodes(text));
  return el;
}
