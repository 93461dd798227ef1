// The page indicator's relay. The host shows and hides it in the tabs an agent turn drives
// (`indicator.show` / `indicator.hide`, called like any allow-listed extension API); a trusted
// press of its Pause or Stop button comes back here from our own content script and goes to the
// host as a `browser.event` (`indicator.action`). The worker decides nothing: the host knows
// which turn drives the tab and what pausing means.
import { CONTENT } from "../generated/protocol.js";
import { ensureExecutor } from "./content-relay.js";
import { registerBrowserApi } from "./browser-api.js";
import { isAgentInput } from "./browser-events.js";

const { TYPES } = CONTENT;
const shown = new Set(); // tabs whose indicator the host asked for

function tell(tabId, type) {
  return chrome.tabs.sendMessage(tabId, CONTENT.message(type), { frameId: 0 });
}

async function show(tabId) {
  shown.add(tabId);
  await ensureExecutor(tabId, 0);
  await tell(tabId, TYPES.INDICATOR_SHOW);
  return true;
}

async function hide(tabId) {
  const was = shown.delete(tabId);
  await tell(tabId, TYPES.INDICATOR_HIDE).catch(() => {}); // no executor there: nothing is shown
  return was;
}

function hideAll() {
  for (const tabId of [...shown]) hide(tabId);
}

export function installIndicator(link) {
  registerBrowserApi("indicator.show", (tabId) => show(tabId));
  registerBrowserApi("indicator.hide", (tabId) => hide(tabId));
  // A new document in a driven tab gets the indicator again.
  chrome.tabs.onUpdated.addListener((tabId, change) => {
    if (change.status === "complete" && shown.has(tabId)) show(tabId).catch(() => {});
  });
  chrome.tabs.onRemoved.addListener((tabId) => shown.delete(tabId));
  chrome.runtime.onMessage.addListener((message, sender) => {
    if (CONTENT.typeOf(message) !== TYPES.INDICATOR_ACTION) return false;
    // Only our own content script, in the top frame of a tab the host is driving, may report.
    if (sender.id !== chrome.runtime.id || !sender.tab || (sender.frameId ?? 0) !== 0) return false;
    const problem = CONTENT.problem(message);
    if (problem) {
      console.warn("Tabwarden: refused a message from a content script:", problem);
      return false;
    }
    const tabId = sender.tab.id;
    if (!shown.has(tabId) || isAgentInput(tabId)) return false;
    link.sendEvent({ type: "browser.event", name: "indicator.action", data: { tabId, action: message.action } });
    return false;
  });
}

// Without a host nothing drives any tab: take every indicator down.
export function indicatorLinkState(state) {
  if (!state.ready) hideAll();
}
