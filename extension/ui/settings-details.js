// Settings: the user's own details (name, e-mail addresses, phone, postal address, their accounts
// and those accounts' sites), one per line. Each counts as the user's own words in every task:
// typing them, or sending them to the site of one of their accounts, asks nothing.
import { h } from "./dom.js";
import { t } from "./strings.js";

const MAX_DETAILS = 50;
const MAX_LENGTH = 500;

export class DetailsSection {
  constructor(root, context) {
    this.context = context;
    this.status = h("p", { class: "status small", role: "status" });
    this.details = h("textarea", { id: "user-details", rows: 5, "aria-label": t("settings.details.label"),
      placeholder: "Ana Lima\nana.lima@example.org\n+351 912 345 678\nhttps://www.mybank.example" });
    this.edited = false;
    this.details.addEventListener("input", () => { this.edited = true; });
    root.append(h("p", { class: "muted small", text: t("settings.details.help") }), this.details,
      h("div", { class: "row" },
        h("button", { type: "button", class: "primary", text: t("settings.details.save"), onclick: () => this.save() })),
      this.status);
  }

  async save() {
    const details = this.details.value.split("\n").map((d) => d.trim()).filter(Boolean);
    if (details.length > MAX_DETAILS || details.some((d) => d.length > MAX_LENGTH)) {
      this.status.textContent = t("settings.details.tooMany", { count: MAX_DETAILS, length: MAX_LENGTH });
      this.status.classList.add("bad");
      return;
    }
    const reply = await this.context.change({ type: "userDetails.save", details }, this.status);
    if (reply.type === "command.ack") this.edited = false;
  }

  render(state) {
    if (this.edited) return; // a broadcast never overwrites what the user is typing
    this.details.value = (state.userDetails || []).join("\n");
  }
}
