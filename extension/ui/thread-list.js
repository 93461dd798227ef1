// The thread list (newest first) with what each thread is doing, and a line for every other
// thread that waits for an approval, so nothing waits unseen. Under each title: when the thread
// started, the site its first task was sent from and how many tasks it had (threads with the
// same title differ there), and a lock when its scope lock holds it to some sites.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";

const DAY_MS = 24 * 3600 * 1000;
const SVG = "http://www.w3.org/2000/svg";

export class ThreadList {
  constructor(root, banner, onSelect) {
    this.root = root;
    this.banner = banner;
    this.onSelect = onSelect;
    this.threads = new Map(); // id -> meta
    this.activity = new Map(); // id -> activity
  }

  load(snapshot) {
    this.threads = new Map((snapshot.threads || []).map((meta) => [meta.id, meta]));
    this.activity = new Map((snapshot.activity || []).map((a) => [a.threadId, a]));
  }

  apply(event) {
    switch (event.type) {
      case "thread.created":
        this.threads.set(event.threadId, event.meta);
        return true;
      case "thread.deleted":
        this.threads.delete(event.threadId);
        return true;
      case "thread.updated": {
        const meta = this.threads.get(event.threadId);
        if (meta) this.threads.set(event.threadId, { ...meta, ...event.patch, revision: event.revision });
        return true;
      }
      case "activity.updated":
        this.activity.set(event.activity.threadId, event.activity);
        return true;
      default:
        return false;
    }
  }

  title(id) {
    const meta = this.threads.get(id);
    return (meta && meta.title) || t("threads.untitled");
  }

  // The sites the thread is locked to ([] when it is not locked).
  lock(id) {
    const meta = this.threads.get(id);
    return (meta && meta.scopeLock) || [];
  }

  render(currentId, approvals) {
    clear(this.root);
    const sorted = [...this.threads.values()].sort((a, b) => (b.updatedAt || 0) - (a.updatedAt || 0));
    if (!sorted.length) this.root.append(h("li", { class: "muted small", text: t("threads.empty") }));
    const now = new Date();
    for (const meta of sorted) {
      const activity = this.activity.get(meta.id) || {};
      const waiting = [...approvals.values()].some((a) => a.threadId === meta.id) || activity.pendingApprovals > 0;
      const facts = factsOf(meta, now);
      this.root.append(h("li", {},
        h("button", { type: "button", class: `thread${meta.id === currentId ? " current" : ""}`,
          "aria-current": meta.id === currentId ? "true" : null, onclick: () => this.onSelect(meta.id) },
        h("span", { class: "thread-text" },
          h("span", { class: "thread-head" },
            (meta.scopeLock || []).length ? lockMark(meta.scopeLock) : null,
            h("span", { class: "title", text: meta.title || t("threads.untitled") })),
          // Each fact kept whole: a narrow list breaks the line between them.
          facts.length ? h("span", { class: "thread-facts", title: startedFull(meta.createdAt) },
            facts.flatMap((fact, i) => [i ? " · " : "", h("span", { class: "fact", text: fact })])) : null),
        waiting ? h("span", { class: "badge warn", text: t("threads.waiting") })
          : activity.running ? h("span", { class: "badge", text: t("threads.running") }) : null)));
    }
    clear(this.banner);
    const others = [...approvals.values()].filter((a) => a.threadId !== currentId);
    const seen = new Set();
    for (const approval of others) {
      if (seen.has(approval.threadId)) continue;
      seen.add(approval.threadId);
      this.banner.append(h("p", { class: "other-waiting" }, t("threads.otherWaiting", { title: this.title(approval.threadId) }), " ",
        h("button", { type: "button", class: "link", text: t("threads.open"), onclick: () => this.onSelect(approval.threadId) })));
    }
  }
}

// "today 14:02", "shop.example", "3 turns": what tells a thread from others of the same title.
function factsOf(meta, now) {
  const turns = meta.turns || 0;
  return [started(meta.createdAt, now), meta.site || "",
    turns ? t(turns === 1 ? "threads.turn" : "threads.turns", { count: turns }) : ""].filter(Boolean);
}

// A thread as one line of text, for a <select> (the settings page's thread choosers).
export function threadLabel(meta, now = new Date()) {
  const facts = factsOf(meta, now).join(" · ");
  const lock = (meta.scopeLock || []).length ? ` · ${t("threads.lockedShort")}` : "";
  return `${meta.title || t("threads.untitled")}${facts ? ` — ${facts}` : ""}${lock}`;
}

// When the thread started, relative to today while that reads better than a date: "today 14:02",
// "yesterday 09:15", "Mon 18:40", then "3 Dec" (with the year when it is not this one).
function started(seconds, now = new Date()) {
  if (!seconds) return "";
  const date = new Date(seconds * 1000);
  const time = date.toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" });
  const days = Math.round((midnight(now) - midnight(date)) / DAY_MS); // rounded: a day across a clock change
  if (days === 0) return t("threads.today", { time });
  if (days === 1) return t("threads.yesterday", { time });
  if (days > 1 && days < 7) return t("threads.weekday", { day: date.toLocaleDateString(undefined, { weekday: "short" }), time });
  const year = date.getFullYear() === now.getFullYear() ? {} : { year: "numeric" };
  return date.toLocaleDateString(undefined, { day: "numeric", month: "short", ...year });
}

function startedFull(seconds) {
  return seconds ? t("threads.startedAt", { when: new Date(seconds * 1000).toLocaleString(undefined,
    { dateStyle: "full", timeStyle: "short" }) }) : undefined;
}

function midnight(date) {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
}

// A padlock naming the sites a thread is locked to: its accessible name, and on hover.
export function lockMark(patterns) {
  const label = t("threads.locked", { patterns: patterns.join(", ") });
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const shackle = document.createElementNS(SVG, "path");
  shackle.setAttribute("d", "M5 7.5V5a3 3 0 0 1 6 0v2.5");
  shackle.setAttribute("fill", "none");
  shackle.setAttribute("stroke", "currentColor");
  shackle.setAttribute("stroke-width", "1.6");
  const body = document.createElementNS(SVG, "rect");
  for (const [name, value] of Object.entries({ x: 3, y: 7, width: 10, height: 7.5, rx: 1.5, fill: "currentColor" })) {
    body.setAttribute(name, String(value));
  }
  svg.append(shackle, body);
  return h("span", { class: "lock", role: "img", "aria-label": label, title: label }, svg);
}
