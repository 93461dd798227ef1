// L0: the extension APIs the host may call, by dotted name. Anything else is refused. The
// worker decides nothing here: the host ran the gatekeeper before sending the call.
import { CODES, failure } from "./failures.js";

const LOAD_POLL_MS = 100;

// Resolve when the tab has finished loading (and, when `fromUrl` is given, has left it).
async function waitForLoad(tabId, options = {}) {
  const timeoutMs = Math.min(Math.max(Number(options.timeoutMs) || 15000, 0), 60000);
  const fromUrl = typeof options.fromUrl === "string" ? options.fromUrl : null;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let tab;
    try {
      tab = await chrome.tabs.get(tabId);
    } catch (_) {
      return { closed: true, timedOut: false };
    }
    const url = tab.url || tab.pendingUrl || "";
    const moved = fromUrl === null || url !== fromUrl;
    if (tab.status === "complete" && moved) return { closed: false, timedOut: false, tab };
    if (Date.now() >= deadline) return { closed: false, timedOut: true, tab };
    await new Promise((resolve) => setTimeout(resolve, LOAD_POLL_MS));
  }
}

// Every tab, with the one the user is looking at (active tab of the last focused window).
async function listTabs() {
  const [tabs, focused] = await Promise.all([chrome.tabs.query({}), chrome.windows.getLastFocused().catch(() => null)]);
  return tabs.map((tab) => ({ ...tab, userLooking: !!(focused && tab.windowId === focused.id && tab.active) }));
}

async function focusTab(tabId) {
  const tab = await chrome.tabs.update(tabId, { active: true });
  await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
  return tab;
}

const API = {
  "tabs.query": (query) => chrome.tabs.query(query || {}),
  "tabs.get": (tabId) => chrome.tabs.get(tabId),
  "tabs.list": () => listTabs(),
  "tabs.create": (props) => chrome.tabs.create(props || {}),
  "tabs.update": (tabId, props) => chrome.tabs.update(tabId, props || {}),
  "tabs.focus": (tabId) => focusTab(tabId),
  "tabs.remove": (tabId) => chrome.tabs.remove(tabId),
  "tabs.group": (options) => chrome.tabs.group(options || {}),
  "tabs.waitForLoad": (tabId, options) => waitForLoad(tabId, options),
  "windows.getAll": (options) => chrome.windows.getAll(options || {}),
  "windows.getLastFocused": () => chrome.windows.getLastFocused(),
  "history.search": (query) => chrome.history.search(query || { text: "" }),
  "bookmarks.search": (query) => chrome.bookmarks.search(query),
  "topSites.get": () => chrome.topSites.get(),
  "sessions.getRecentlyClosed": (filter) => chrome.sessions.getRecentlyClosed(filter || {}),
  "sessions.restore": (sessionId) => chrome.sessions.restore(sessionId),
  "tabGroups.query": (query) => chrome.tabGroups.query(query || {}),
  "tabGroups.update": (groupId, props) => chrome.tabGroups.update(groupId, props || {}),
  "permissions.contains": (perms) => chrome.permissions.contains(perms || {}),
  "permissions.getAll": () => chrome.permissions.getAll(),
  // download (judged by its destination on the host) and artifacts (data: URLs made by the host).
  "downloads.download": (options) => chrome.downloads.download(options || {}),
  "downloads.search": (query) => chrome.downloads.search(query || {}),
  "downloads.cancel": (downloadId) => chrome.downloads.cancel(downloadId),
  "downloads.erase": (query) => chrome.downloads.erase(query || {}),
  "downloads.removeFile": (downloadId) => chrome.downloads.removeFile(downloadId),
};

export async function handleBrowserCall(message) {
  const fn = API[message.api];
  if (!fn) throw failure(CODES.UNSUPPORTED, `extension API ${message.api} is not available to the host`);
  try {
    return await fn(...(message.args || []));
  } catch (err) {
    if (err && typeof err.code === "string") throw err;
    const text = String((err && err.message) || err);
    const code = /No tab with id|No window with id|No group with id/i.test(text) ? CODES.NOT_FOUND : CODES.BROWSER_API_ERROR;
    throw failure(code, `${message.api}: ${text}`);
  }
}

export function registerBrowserApi(name, fn) {
  API[name] = fn;
}
