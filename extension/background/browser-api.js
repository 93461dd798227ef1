// L0: the extension APIs the host may call, by dotted name. Anything else is refused. The
// worker decides nothing here: the host ran the gatekeeper before sending the call.
import { callContent, readAfterLoad, requireTabAt } from "./content-relay.js";
import { injectAtCommit, injectionUnderway } from "./load-executor.js";
import { agentAtWork } from "./executor-at-work.js";
import { CODES, errorInfo, failure } from "./failures.js";
import { rulesInForce } from "./guard-installs.js";
import { answerUnasked } from "./read-ports.js";

// The tab is looked at again when the browser says it changed, and at the latest this long after
// the last look (a change can come between a look and the listener; a held load reports nothing).
const LOAD_POLL_MS = 100;
// A navigation that did not start: Chromium holds a request while the declarativeNetRequest
// rules change and now and then never lets it go (status "complete" with only a pendingUrl), and
// a background tab just created may drop a load sent before its blank page settled (it stays
// "unloaded" at `fromUrl`). Past this long in either state the load is sent again, once.
const HELD_MS = 1500;

// Resolve when the tab has finished loading (and, when `fromUrl` is given, has left it).
// `url`: the URL the host is loading in the tab, sent again if the load did not start.
async function waitForLoad(tabId, options = {}) {
  const timeoutMs = Math.min(Math.max(Number(options.timeoutMs) || 15000, 0), 60000);
  const fromUrl = typeof options.fromUrl === "string" ? options.fromUrl : null;
  const loading = typeof options.url === "string" ? options.url : null;
  const deadline = Date.now() + timeoutMs;
  let heldSince = 0;
  let resent = false;
  let seen = null; // the tab as the last change reported it, when it did
  for (;;) {
    const change = nextChange(tabId, LOAD_POLL_MS); // listening before the look: nothing slips between
    let tab = seen;
    try {
      tab = tab || await chrome.tabs.get(tabId);
    } catch (_) {
      change.cancel();
      return { closed: true, timedOut: false };
    }
    const url = tab.url || tab.pendingUrl || "";
    const moved = fromUrl === null || url !== fromUrl;
    const pending = tab.status === "complete" && !!tab.pendingUrl && tab.pendingUrl !== tab.url;
    const dropped = loading !== null && tab.status === "unloaded" && !tab.pendingUrl && url === fromUrl;
    const held = pending || dropped;
    if (held) {
      heldSince = heldSince || Date.now();
      if (!resent && Date.now() - heldSince >= HELD_MS) {
        resent = true;
        await chrome.tabs.update(tabId, { url: pending ? tab.pendingUrl : loading }).catch(() => {});
      }
    } else {
      heldSince = 0;
    }
    if (tab.status === "complete" && moved && !held) {
      change.cancel();
      return { closed: false, timedOut: false, tab };
    }
    if (Date.now() >= deadline) {
      change.cancel();
      return { closed: false, timedOut: true, tab };
    }
    seen = await change.promise;
  }
}

// Resolves when the browser reports a change of `tabId` (its status, its URL, or its removal),
// or after `ms`; with the tab as the change left it when the browser sent it along (a look the
// waiter need not take again). `cancel` stops listening.
function nextChange(tabId, ms) {
  let finish = () => {};
  const promise = new Promise((resolve) => { finish = resolve; });
  const onUpdated = (id, _change, tab) => { if (id === tabId) done(tab); };
  const onRemoved = (id) => { if (id === tabId) done(); };
  const timer = setTimeout(done, ms);
  function done(tab) {
    clearTimeout(timer);
    chrome.tabs.onUpdated.removeListener(onUpdated);
    chrome.tabs.onRemoved.removeListener(onRemoved);
    finish(tab && typeof tab === "object" ? tab : null);
  }
  chrome.tabs.onUpdated.addListener(onUpdated);
  chrome.tabs.onRemoved.addListener(onRemoved);
  return { promise, cancel: done };
}

// How long a reload may take to start before the wait for its load goes on regardless.
const RELOAD_START_MS = 5000;

// Reload a tab and resolve once the reload has started (the tab reports "loading"), so that the
// wait for the load that follows cannot take the old document for the new one.
function reloadTab(tabId) {
  return new Promise((resolve, reject) => {
    let timer = null;
    const done = (started) => {
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      resolve({ started });
    };
    const onUpdated = (id, change) => {
      if (id === tabId && change.status === "loading") done(true);
    };
    chrome.tabs.onUpdated.addListener(onUpdated);
    timer = setTimeout(() => done(false), RELOAD_START_MS);
    chrome.tabs.reload(tabId).catch((err) => {
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      reject(err);
    });
  });
}

const WEB_PAGE = /^https?:/i;
// How long the answer of the read a loaded page took of itself is waited for, once the load is
// over and the page has said it is reading.
const READ_AT_LOAD_WAIT_MS = 5000;

// With `options.snapshot` ({maxTokens}), a page that finished loading is read at once, in the same
// call from the host (no round trip between the load and the read): the read's result, or its
// failure, goes with the answer. A load that timed out or left no web page is not read here.
// `executorReady`: the injection at the latest commit, waited for so the read finds the executor
// in place. `early`: for the agent's own load, the result of the read the new document takes of
// itself right after its load event, asked for at its commit (null when the document did not
// take it on, or the read failed): the browser tells this worker of the load some milliseconds
// after that event, and by then the read is under way or done. Without it the read is asked for
// from here, with the id of the page's own (`requestId`): one still under way is shared, not run
// twice.
async function readLoaded(tabId, outcome, snapshot, executorReady = Promise.resolve(), early = null, requestId = undefined) {
  if (!snapshot || typeof snapshot !== "object" || outcome.closed || outcome.timedOut) return outcome;
  if (!outcome.tab || !WEB_PAGE.test(outcome.tab.url || "")) return outcome;
  const own = early && await early;
  if (own) {
    outcome.snapshot = own;
    return outcome;
  }
  await executorReady;
  try {
    const read = { tabId, frameId: 0, tool: "read_page", params: snapshotParams(snapshot), write: false, requestId };
    outcome.snapshot = await callContent(read, new AbortController().signal);
  } catch (err) {
    outcome.snapshotFailure = errorInfo(err);
  }
  return outcome;
}

function snapshotParams(snapshot) {
  return Number.isInteger(snapshot.maxTokens) ? { maxTokens: snapshot.maxTokens } : {};
}

// How long a load waits for the guard's rules sent before it: less than the host waits for their
// install, so a load never starts after the host has taken the install for failed.
const GUARD_WAIT_MS = 5000;

// The guard's rules sent just before a load are in force; `guard_unavailable` when the browser
// refused them or did not take them within GUARD_WAIT_MS.
async function guardInForce() {
  let timer = null;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`not in force within ${GUARD_WAIT_MS} ms`)), GUARD_WAIT_MS); });
  try {
    await Promise.race([rulesInForce(), late]);
  } catch (err) {
    throw failure(CODES.GUARD_UNAVAILABLE, `the navigation guard's rules for this load were refused: ${(err && err.message) || err}`,
      "precheck", true, { dispatched: false });
  } finally {
    clearTimeout(timer);
  }
}

// Load `options.url` in the tab and wait for it as waitForLoad does, in one call from the host
// (the load, then its end, without a round trip between). The new document is driven from its
// commit, and has the executor (from the browser, or injected at commit) by the time the snapshot
// (`readLoaded`) is taken (load-executor.js). `options.afterGuard`: the host sent the navigation guard's rules for this load
// just before, without waiting for their answer; the load starts once they are in force, and
// not at all when the browser refused them. `options.fromUrl`: the page the load was judged from.
async function navigateTab(tabId, options = {}) {
  if (typeof options.url !== "string") throw failure(CODES.INVALID_MESSAGE, "tabs.navigate needs a url", "precheck", false);
  // The load was judged from the page at `fromUrl` (the host's record of the tab may be a moment
  // behind): it starts only while the tab still shows that page. That look goes out beside the
  // wait for the guard's rules (the browser answers it only once it has taken them in).
  const from = typeof options.fromUrl === "string" ? requireTabAt(tabId, options.fromUrl) : Promise.resolve();
  from.catch(() => {}); // taken below, after a refused guard if both fail
  if (options.afterGuard) await guardInForce();
  await from;
  const selfRead = options.snapshot && typeof options.snapshot === "object"
    ? readAfterLoad(snapshotParams(options.snapshot), (Number(options.timeoutMs) || 15000) + 15000) : null;
  const early = selfRead ? answerUnasked(tabId, selfRead.requestId) : null;
  let executorReady = Promise.resolve();
  let documentId = null;
  const committed = (details) => {
    if (details.tabId === tabId && details.frameId === 0 && details.documentId) {
      documentId = details.documentId;
      executorReady = injectAtCommit(tabId, details.documentId, details.url, selfRead);
    }
  };
  chrome.webNavigation.onCommitted.addListener(committed);
  try {
    let outcome;
    try {
      const tab = await chrome.tabs.update(tabId, { url: options.url });
      outcome = await waitForLoad(tabId, { ...options, fromUrl: typeof options.fromUrl === "string" ? options.fromUrl : tab.url });
    } finally {
      chrome.webNavigation.onCommitted.removeListener(committed);
    }
    // Only the answer of the document the tab shows now, waited for a while: past that, the read
    // asked for from here shares the page's own if that is still under way.
    const own = early && early.resultOf(documentId, READ_AT_LOAD_WAIT_MS);
    return await readLoaded(tabId, outcome, options.snapshot, executorReady, own, selfRead ? selfRead.requestId : undefined);
  } finally {
    if (early) early.stop();
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
  "tabs.reload": (tabId) => reloadTab(tabId),
  "tabs.focus": (tabId) => focusTab(tabId),
  "tabs.remove": (tabId) => chrome.tabs.remove(tabId),
  "tabs.group": (options) => chrome.tabs.group(options || {}),
  "tabs.waitForLoad": async (tabId, options) => {
    const outcome = await waitForLoad(tabId, options);
    return readLoaded(tabId, outcome, (options || {}).snapshot, injectionUnderway(tabId));
  },
  "tabs.navigate": (tabId, options) => navigateTab(tabId, options),
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
  "permissions.remove": (perms) => chrome.permissions.remove(perms || {}),
  // After the host added a site to the manifest of this run's copy (a headless launch): the
  // reload takes it. Later, so the answer leaves first.
  "runtime.reloadSoon": () => {
    setTimeout(() => chrome.runtime.reload(), 200);
    return true;
  },
  // download (judged by its destination on the host) and artifacts (data: URLs made by the host).
  "downloads.download": (options) => chrome.downloads.download(options || {}),
  "downloads.search": (query) => chrome.downloads.search(query || {}),
  "downloads.cancel": (downloadId) => chrome.downloads.cancel(downloadId),
  "downloads.erase": (query) => chrome.downloads.erase(query || {}),
  "downloads.removeFile": (downloadId) => chrome.downloads.removeFile(downloadId),
};

// The calls that load pages for the agent, with where the URL they load is among their arguments:
// the executor is wanted in the pages of that site loaded from now on (executor-at-work.js).
const LOADS = {
  "tabs.create": (props) => props && props.url,
  "tabs.update": (_tabId, props) => props && props.url,
  "tabs.navigate": (_tabId, options) => options && options.url,
  "tabs.waitForLoad": (_tabId, options) => options && options.url,
  "tabs.reload": () => null,
};

export async function handleBrowserCall(message) {
  const fn = API[message.api];
  if (!fn) throw failure(CODES.UNSUPPORTED, `extension API ${message.api} is not available to the host`);
  if (Object.hasOwn(LOADS, message.api)) agentAtWork(LOADS[message.api](...(message.args || [])));
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
