// L0: the extension APIs the host may call, by dotted name. Anything else is refused.
import { protocolError } from "./chunks.js";

const API = {
  "tabs.query": (query) => chrome.tabs.query(query || {}),
  "tabs.get": (tabId) => chrome.tabs.get(tabId),
  "windows.getAll": (options) => chrome.windows.getAll(options || {}),
  "permissions.contains": (perms) => chrome.permissions.contains(perms || {}),
  "permissions.getAll": () => chrome.permissions.getAll(),
};

export async function handleBrowserCall(message) {
  const fn = API[message.api];
  if (!fn) throw protocolError("unsupported", `extension API ${message.api} is not available to the host`);
  return fn(...(message.args || []));
}

export function registerBrowserApi(name, fn) {
  API[name] = fn;
}
