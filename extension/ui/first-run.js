// What an empty thread shows: the model in use (or the way to add one), whether Tabwarden may
// act on the current site (with a button that asks Chrome for access), and example tasks that
// fill the composer. One element, kept and updated in place, so the chat view can show it
// whenever the thread has no items.
import { h, clear } from "./dom.js";
import { t } from "./strings.js";

const WEB = /^https?:/i;
// What the host's settings said last: whether no provider at all is set up (and none could not be read).
let nothingSetUp = false;
const EXAMPLES = ["firstRun.example.summarize", "firstRun.example.links", "firstRun.example.form"];

// Opens the settings page at one section (the options page API cannot name a section).
export function openSettings(section) {
  chrome.tabs.create({ url: chrome.runtime.getURL(`ui/settings.html${section ? `#${section}` : ""}`) });
}

export class FirstRun {
  // `fill(text)` puts an example in the composer; `currentTab()` resolves to the tab a task
  // would start on (or null).
  constructor({ fill, currentTab }) {
    this.currentTab = currentTab;
    this.model = h("p", { class: "first-model", dataset: { state: "unknown" } });
    this.site = h("p", { class: "first-site", dataset: { state: "none" } });
    this.siteStatus = h("span", { class: "small", role: "status" });
    this.el = h("section", { class: "empty first-run", "aria-labelledby": "first-run-title" },
      h("h2", { id: "first-run-title", text: t("chat.empty") }),
      this.model,
      h("div", { class: "first-site-row" }, this.site, this.siteStatus),
      h("h3", { text: t("firstRun.examples") }),
      h("ul", { class: "examples" }, EXAMPLES.map((key) => h("li", {},
        h("button", { type: "button", class: "example", text: t(key), onclick: () => fill(t(key)) })))));
    const refresh = () => this.refreshSite();
    chrome.tabs.onActivated.addListener(refresh);
    chrome.tabs.onUpdated.addListener((id, change) => { if (change.url || change.status === "complete") refresh(); });
    chrome.permissions.onAdded.addListener(refresh);
    chrome.permissions.onRemoved.addListener(refresh);
    refresh();
  }

  // The settings state's providers: the default one is the model new tasks use.
  setSettings(state) {
    const providers = state.providers || [];
    nothingSetUp = !providers.length && !(state.problems || []).length;
    const chosen = providers.find((p) => p.isDefault);
    clear(this.model);
    this.model.dataset.state = chosen ? "ready" : "missing";
    if (chosen) {
      this.model.append(h("span", { class: "chip", text: t("firstRun.model", { name: chosen.name, model: chosen.model }) }), " ",
        h("button", { type: "button", class: "link", text: t("firstRun.changeModel"), onclick: () => openSettings("providers") }));
    } else {
      this.model.append(h("span", { text: t(providers.length ? "firstRun.noDefault" : "firstRun.noModel") }), " ",
        h("button", { type: "button", class: "primary", text: t("firstRun.addModel"), onclick: () => openSettings("providers") }));
    }
  }

  async refreshSite() {
    const ticket = (this.ticket = (this.ticket || 0) + 1);
    const tab = await this.currentTab().catch(() => null);
    const url = tab && WEB.test(tab.url || "") ? new URL(tab.url) : null;
    const granted = url ? await chrome.permissions.contains({ origins: [`${url.origin}/*`] }).catch(() => false) : false;
    if (ticket !== this.ticket) return; // the tab changed while Chrome answered
    if (this.asked !== (url && url.origin)) this.siteStatus.textContent = ""; // about another site
    clear(this.site);
    if (!url) {
      this.site.dataset.state = "none";
      this.site.append(t("firstRun.noSite"));
      return;
    }
    this.site.dataset.state = granted ? "granted" : "missing";
    this.site.append(h("span", { class: `chip access-${granted ? "granted" : "missing"}`, title: url.origin,
      text: t(granted ? "firstRun.siteGranted" : "firstRun.siteMissing", { site: url.host }) }));
    if (!granted) {
      this.site.append(" ", h("button", { type: "button", class: "grant", text: t("firstRun.grant", { site: url.host }),
        onclick: () => this.grant(url.origin) }));
    }
  }

  // Called inside the click: Chrome grants site access only from a user gesture.
  grant(origin) {
    this.asked = origin;
    this.siteStatus.textContent = t("firstRun.grantAsking", { origin });
    chrome.permissions.request({ origins: [`${origin}/*`] }).catch(() => false).then((granted) => {
      this.siteStatus.textContent = granted ? "" : t("firstRun.grantRefused", { origin });
      this.refreshSite();
    });
  }
}

// The one message a turn shows when no model can answer: what to do, and the button that does it.
// With nothing set up that is adding a model; otherwise the host says what is wrong (no default
// chosen, a key that cannot be read, a mistake in the settings file).
export function modelMissing(item) {
  return h("article", { class: "item notice model-missing", role: "alert", dataset: { itemId: item.id } },
    h("p", { text: nothingSetUp || !item.message ? t("firstRun.modelMissing") : item.message }),
    h("button", { type: "button", class: "primary", text: t("firstRun.openProviders"), onclick: () => openSettings("providers") }));
}

// A turn that cannot start for want of a model reports it three times (the stored notice, the
// live error, the stop line); after `event` is applied, keep the error alone (drawn by
// `modelMissing`). True when items were dropped, so the view redraws.
export function foldModelMissing(model, event) {
  if (!["error", "turn.complete", "item.start", "item.delta", "item.complete"].includes(event.type)) return false;
  const items = model.items;
  const repeats = new Set();
  items.forEach((item, at) => {
    if (item.kind !== "error" || item.code !== "not_configured") return;
    const before = items[at - 1];
    const after = items[at + 1];
    if (before && before.kind === "notice" && before.noticeKind === "error") repeats.add(before);
    if (after && after.kind === "notice" && after.noticeKind === "stop:error") repeats.add(after);
  });
  for (const item of repeats) {
    model.byId.delete(item.id);
    model.unshown.add(item.id); // a late event for it is not drawn again
  }
  model.items = items.filter((item) => !repeats.has(item));
  return repeats.size > 0;
}
