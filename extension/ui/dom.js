// Small DOM helpers. Text always goes in as text nodes (never as HTML): model output, page
// content and parameters are untrusted. AnswerGuard decides when a card's keys and clicks count.

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function isEditable(target) {
  if (!target || !(target instanceof Element)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

export function clock(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
}

export function when(seconds) {
  const date = new Date(seconds * 1000);
  return date.toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" });
}

// -- answers nobody gives by accident --------------------------------------------------------------

// A card's keys count only from someone who chose that card: while the user has put the focus
// on one of its buttons (a card never moves it there by itself), and neither while the card is
// new or has just changed (it was not read yet) nor while the user is typing (the next letter
// belongs to what they were writing). A click counts unless the press began before the card (or
// its new content) was there, or it is the rest of a double-click.
export const SETTLE_MS = 600;
const MODIFIERS = new Set(["Shift", "Control", "Alt", "AltGraph", "Meta", "CapsLock", "Fn", "OS"]);
let keyAt = -Infinity; // the latest key press anywhere in the page
let keyBefore = -Infinity; // the one before it
let shownAt = 0; // when the page was last made visible: a card that arrived hidden is new then
let watching = false;

function watchKeys() {
  if (watching) return;
  watching = true;
  // On the window, capturing: it sees every key press before any card does.
  window.addEventListener("keydown", (event) => {
    if (MODIFIERS.has(event.key)) return; // Shift for a capital letter is part of that key
    keyBefore = keyAt;
    keyAt = performance.now();
  }, true);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) shownAt = performance.now();
  });
}

export class AnswerGuard {
  constructor(card) {
    watchKeys();
    this.card = card;
    this.downAt = -Infinity;
    this.timer = 0;
    this.arm();
    card.addEventListener("pointerdown", () => { this.downAt = performance.now(); }, true);
    card.addEventListener("click", (event) => this.screenClick(event), true);
    card.addEventListener("keydown", (event) => this.screenActivation(event), true);
    card.addEventListener("keydown", () => this.showKeys());
    card.addEventListener("focusin", () => this.showKeys());
    card.addEventListener("focusout", () => this.card.classList.remove("keys-live")); // focusin follows within the card
  }

  // Shown, or its answers changed under the user's eyes: the keys wait again.
  arm() {
    this.armedAt = performance.now();
    this.showKeys();
  }

  since() {
    return Math.max(this.armedAt, shownAt);
  }

  // The card's button the user put the focus on, if the focus is on one.
  focusedButton() {
    const el = document.activeElement;
    return el instanceof HTMLButtonElement && this.card.contains(el) && !el.disabled ? el : null;
  }

  // Whether the key press being handled may answer (the page-wide listener has recorded it).
  takesKey(event) {
    if (event.repeat || document.hidden || !event.isTrusted || event.target !== this.focusedButton()) return false;
    return keyAt - this.since() >= SETTLE_MS && keyAt - keyBefore >= SETTLE_MS;
  }

  // Enter and Space click a focused button: on one that answers they wait like the card's
  // letters (a button marked data-shows only opens or closes part of the card).
  screenActivation(event) {
    const button = this.focusedButton();
    if ((event.key === "Enter" || event.key === " ") && event.target === button && !("shows" in button.dataset)
      && !this.takesKey(event)) event.preventDefault();
  }

  screenClick(event) {
    const button = event.target instanceof Element ? event.target.closest("button") : null;
    if (!button) return;
    let counts;
    if (event.detail > 1) counts = false; // the rest of a double-click: its first click counted, or landed elsewhere
    else if (event.detail === 1) counts = this.downAt >= this.since(); // pressed on what the card shows now
    // No pointer: a key (judged as it was pressed), the card's own text field's Enter, or
    // assistive technology.
    else counts = "shows" in button.dataset || performance.now() - this.since() >= SETTLE_MS;
    if (counts) return;
    event.preventDefault();
    event.stopPropagation();
  }

  // The key hints show exactly while the keys work.
  showKeys() {
    clearTimeout(this.timer);
    const focused = this.focusedButton();
    const wait = Math.max(this.since(), keyAt) + SETTLE_MS - performance.now();
    this.card.classList.toggle("keys-live", Boolean(focused) && wait <= 0 && !document.hidden);
    if (focused && wait > 0) this.timer = setTimeout(() => this.showKeys(), wait + 5);
  }

  stop() {
    clearTimeout(this.timer);
  }
}
