// The thread list (newest first) with what each thread is doing, and a line for every other
// thread that waits for an approval, so nothing waits unseen.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";

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

  render(currentId, approvals) {
    clear(this.root);
    const sorted = [...this.threads.values()].sort((a, b) => (b.updatedAt || 0) - (a.updatedAt || 0));
    if (!sorted.length) this.root.append(h("li", { class: "muted small", text: t("threads.empty") }));
    for (const meta of sorted) {
      const activity = this.activity.get(meta.id) || {};
      const waiting = [...approvals.values()].some((a) => a.threadId === meta.id) || activity.pendingApprovals > 0;
      this.root.append(h("li", {},
        h("button", { type: "button", class: `thread${meta.id === currentId ? " current" : ""}`,
          "aria-current": meta.id === currentId ? "true" : null, onclick: () => this.onSelect(meta.id) },
        h("span", { class: "title", text: meta.title || t("threads.untitled") }),
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
