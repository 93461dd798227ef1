import { CONTENT } from "../generated/protocol.js";
import { watchFrames } from "./content-relay.js";

const { TYPES } = CONTENT;
// The content messages this listener answers; the indicator relay owns `indicator.action`.
const OWN_TYPES = new Set([TYPES.TIMER_SLEEP, TYPES.TAKEOVER_FRAME_LOADED, TYPES.TAKEOVER_MANUAL_INPUT]);

// Browser happenings the host tracks (tab lifecycle, revoked site access, a person using a page
// the agent drives), forwarded as `browser.event` frames. The host decides what they mean.
const AGENT_INPUT_WINDOW_MS = 1500;
const agentInputAt = new Map(); // tabId -> time of the agent's last trusted (debugger) input

// The debugger tools call this before each trusted input: that input is trusted too, and must
// not read as a person taking over.
export function markAgentInput(tabId) {
  agentInputAt.set(tabId, Date.now());
}

// Also read by the indicator relay: the agent's own trusted input never presses its buttons.
export function isAgentInput(tabId) {
  const at = agentInputAt.get(tabId);
  return at !== undefined && Date.now() - at < AGENT_INPUT_WINDOW_MS;
}

export function installBrowserEvents(link) {
  const emit = (name, data) => link.sendEvent({ type: "browser.event", name, data });
  chrome.tabs.onCreated.addListener((tab) => emit("tabs.created", { tabId: tab.id, openerTabId: tab.openerTabId ?? null, url: tab.pendingUrl || tab.url || "" }));
  chrome.tabs.onRemoved.addListener((tabId, info) => {
    agentInputAt.delete(tabId);
    emit("tabs.removed", { tabId, windowClosing: !!info.isWindowClosing });
  });
  chrome.tabs.onReplaced.addListener((addedTabId, removedTabId) => emit("tabs.replaced", { addedTabId, removedTabId }));
  chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
    if (change.url || change.status) emit("tabs.updated", { tabId, url: tab.url || "", status: tab.status || "" });
  });
  chrome.permissions.onRemoved.addListener((perms) => emit("permissions.removed", { origins: perms.origins || [], permissions: perms.permissions || [] }));
  chrome.permissions.onAdded.addListener((perms) => emit("permissions.added", { origins: perms.origins || [], permissions: perms.permissions || [] }));
  chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
    // Only our own content scripts, from inside a tab, may ask or report.
    if (sender.id !== chrome.runtime.id || !sender.tab || typeof sender.tab.id !== "number") return false;
    const type = CONTENT.typeOf(message);
    if (type !== null && !OWN_TYPES.has(type)) return false;
    // Undeclared types are refused here (the indicator relay ignores them).
    const problem = CONTENT.problem(message);
    if (problem) {
      console.warn("Tabwarden: refused a message from a content script:", problem);
      return false;
    }
    switch (type) {
      case TYPES.TIMER_SLEEP:
        // Timing for page executors in hidden tabs, whose own timers Chrome throttles.
        setTimeout(() => sendResponse(true), message.ms);
        return true;
      case TYPES.TAKEOVER_FRAME_LOADED:
        watchFrames(sender.tab.id);
        return false;
      case TYPES.TAKEOVER_MANUAL_INPUT:
        if (isAgentInput(sender.tab.id)) return false;
        emit("manual_input", {
          tabId: sender.tab.id,
          frameId: sender.frameId ?? 0,
          kind: message.kind,
          url: String(sender.url || sender.tab.url || "").slice(0, 2000),
          duringAgentRequest: message.duringAgentRequest,
        });
        return false;
      default:
        return false;
    }
  });
}
