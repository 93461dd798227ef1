// Browser happenings the host tracks (tab lifecycle, revoked site access), forwarded as
// `browser.event` frames.
export function installBrowserEvents(link) {
  const emit = (name, data) => link.sendEvent({ type: "browser.event", name, data });
  chrome.tabs.onCreated.addListener((tab) => emit("tabs.created", { tabId: tab.id, openerTabId: tab.openerTabId ?? null, url: tab.pendingUrl || tab.url || "" }));
  chrome.tabs.onRemoved.addListener((tabId, info) => emit("tabs.removed", { tabId, windowClosing: !!info.isWindowClosing }));
  chrome.tabs.onReplaced.addListener((addedTabId, removedTabId) => emit("tabs.replaced", { addedTabId, removedTabId }));
  chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
    if (change.url || change.status) emit("tabs.updated", { tabId, url: tab.url || "", status: tab.status || "" });
  });
  chrome.permissions.onRemoved.addListener((perms) => emit("permissions.removed", { origins: perms.origins || [], permissions: perms.permissions || [] }));
}
