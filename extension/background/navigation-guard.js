// The navigation guard's browser side. The host computes every rule (which tabs, which
// destinations) and sends the whole set; this file installs it as declarativeNetRequest session
// rules and reports what the browser did: a navigation it blocked, and which tab opened which.
// It decides nothing (host/browser/navguard/ says why the guard is built this way).
import { CODES, failure } from "./failures.js";
import { registerBrowserApi } from "./browser-api.js";
import { replaceRules } from "./guard-installs.js";

const BLOCKED_BY_CLIENT = "net::ERR_BLOCKED_BY_CLIENT";
// A navigation whose response becomes a download is aborted; the download follows at once.
const ABORTED = "net::ERR_ABORTED";
const DOWNLOAD_GRACE_MS = 3000;
const CONDITION_FIELDS = ["tabIds", "excludedTabIds", "requestDomains", "regexFilter", "urlFilter", "initiatorDomains",
  "excludedRequestDomains"];

function toSessionRule(rule) {
  const condition = { resourceTypes: rule.resourceTypes };
  for (const name of CONDITION_FIELDS) {
    if (rule[name] !== undefined) condition[name] = rule[name];
  }
  return { id: rule.id, priority: rule.priority, action: { type: rule.action }, condition };
}

// Handler of `guard.install {rules}`: every session rule is replaced in one update, so there is
// no moment without a guard; a refusal leaves the previous rules in force.
export async function installGuard(message) {
  try {
    await replaceRules(message.rules.map(toSessionRule));
  } catch (err) {
    throw failure(CODES.GUARD_UNAVAILABLE, `the browser refused the navigation guard's rules: ${(err && err.message) || err}`,
      "precheck", true, { dispatched: false });
  }
  return { installed: message.rules.length };
}

// The link to the host closed: its rules go with it (a host starts with none, and no thread of
// a host that is gone drives any tab).
export function liftGuard() {
  replaceRules([]).catch((err) => console.warn("Tabwarden: could not lift the navigation guard:", err));
}

function sameUrl(a, b) {
  try {
    return new URL(a).href === new URL(b).href;
  } catch (_) {
    return a === b;
  }
}

// For `download`, whose own requests no session rule matches: load `url` in a tab the host
// guards and say how that navigation ended, each redirect hop having been matched on the way.
// {outcome: "blocked" | "page" | "download" | "error" | "timeout", url, downloadId?, error?}
function follow(tabId, url, timeoutMs) {
  const limit = Math.min(Math.max(Number(timeoutMs) || 15000, 1000), 60000);
  return new Promise((resolve) => {
    let timer = null;
    let grace = null;
    const onError = (details) => {
      if (details.tabId !== tabId || details.frameId !== 0) return;
      if (details.error === BLOCKED_BY_CLIENT) done({ outcome: "blocked", url: details.url });
      else if (details.error === ABORTED) grace = setTimeout(() => done({ outcome: "error", url: details.url, error: details.error }), DOWNLOAD_GRACE_MS);
      else done({ outcome: "error", url: details.url, error: details.error });
    };
    const onCommitted = (details) => {
      if (details.tabId === tabId && details.frameId === 0 && details.url !== "about:blank") done({ outcome: "page", url: details.url });
    };
    const onDownload = (item) => {
      if (sameUrl(item.url, url)) done({ outcome: "download", url: item.finalUrl || item.url, downloadId: item.id });
    };
    function done(answer) {
      clearTimeout(timer);
      clearTimeout(grace);
      chrome.webNavigation.onErrorOccurred.removeListener(onError);
      chrome.webNavigation.onCommitted.removeListener(onCommitted);
      chrome.downloads.onCreated.removeListener(onDownload);
      resolve(answer);
    }
    chrome.webNavigation.onErrorOccurred.addListener(onError);
    chrome.webNavigation.onCommitted.addListener(onCommitted);
    chrome.downloads.onCreated.addListener(onDownload);
    timer = setTimeout(() => done({ outcome: "timeout", url }), limit);
    chrome.tabs.update(tabId, { url }).catch((err) => done({ outcome: "error", url, error: String((err && err.message) || err) }));
  });
}

// What the host hears: navigations the browser blocked (the guard's, or another extension's: the
// host tells them apart), and the tabs pages open, with their opener (Chrome does not always give
// a pop-up's opener in tabs.onCreated).
export function installNavigationGuard(link) {
  const emit = (name, data) => link.sendEvent({ type: "browser.event", name, data });
  chrome.webNavigation.onErrorOccurred.addListener((details) => {
    if (details.error !== BLOCKED_BY_CLIENT) return;
    emit("navigation.blocked", { tabId: details.tabId, frameId: details.frameId, url: String(details.url || "").slice(0, 8000) });
  });
  chrome.webNavigation.onCreatedNavigationTarget.addListener((details) => emit("navigation.target", {
    sourceTabId: details.sourceTabId, sourceFrameId: details.sourceFrameId, tabId: details.tabId,
    url: String(details.url || "").slice(0, 8000),
  }));
  registerBrowserApi("guard.follow", follow);
  // A worker that starts has no host yet: rules a previous worker's host left are lifted.
  liftGuard();
  resumeStalledStartTabs();
}

// With the declarativeNetRequest permission, Chromium holds a tab's first request until the
// extension's rules are loaded; a tab the browser opened before an extension loaded from the
// command line can stay held for good: `pendingUrl` set, no `url`, status "complete", nothing
// shown. Loading its URL again lets it go (the request was the browser's or the user's). The
// tab may reach that state only after the worker started, so it is looked for a few times.
const STALLED_LOOKS_MS = [0, 500, 1500, 4000];

function resumeStalledStartTabs() {
  for (const delay of STALLED_LOOKS_MS) {
    setTimeout(() => {
      chrome.tabs.query({}).then((tabs) => {
        for (const tab of tabs) {
          if (tab.url || !tab.pendingUrl || tab.status !== "complete") continue;
          chrome.tabs.update(tab.id, { url: tab.pendingUrl }).catch(() => {});
        }
      }).catch(() => {});
    }, delay);
  }
}
