// Messages written while the host is not connected: they wait in the engine client's outbox and
// go when it connects. Until the host has taken one it stays on screen with a queued marker (the
// composer is already empty); one the host refused stays, marked not sent, with the reason.
import { h } from "./dom.js";
import { t } from "./strings.js";

export class PendingSends {
  constructor(root) {
    this.root = root;
  }

  // Show `text` as waiting; returns `settle(reply)`: an acknowledged message leaves (the thread
  // shows it from now on), a refused one is marked not sent.
  add(text) {
    const marker = h("span", { class: "pending-marker", text: t("pending.queued") });
    const el = h("article", { class: "item user pending", dataset: { pending: "queued" } },
      h("h3", { class: "who" }, t("chat.you"), " · ", marker),
      h("p", { class: "text", text }));
    this.root.append(el);
    el.scrollIntoView({ block: "end" });
    return (reply) => {
      if (!reply || reply.type === "command.ack") {
        el.remove();
        return;
      }
      el.dataset.pending = "failed";
      marker.textContent = t("pending.notSent", { message: reply.message || reply.code || "" });
      marker.setAttribute("role", "alert");
      el.append(h("button", { type: "button", class: "link", text: t("pending.dismiss"), onclick: () => el.remove() }));
    };
  }
}
