// A page the agent loads is driven from the moment its document is committed, and the read that
// follows its load finds the executor in place. That holds for the agent's own loads (navigate)
// and for the loads its writes cause (a link, a submitted form). While the executor is registered
// (executor-at-work.js) the browser puts it in, and the document is only armed here (its takeover
// watcher reports a person from then on); otherwise the executor is injected at commit. Where it
// cannot go (no site access, a page of the browser), nothing happens; the read injects it when it
// must.
import { callContent, EXECUTOR_FILES, watchFrames } from "./content-relay.js";
import { agentAtWork, executorRegistered } from "./executor-at-work.js";

// tabId -> { documentId, underway }: the tab's latest top-frame document given the executor (or
// armed) at commit. A document gets it once, however many watchers saw it commit (a load of the
// agent's own that comes soon after a write is seen by both).
const injected = new Map();
chrome.tabs.onRemoved.addListener((tabId) => injected.delete(tabId));

// The executor into the document `documentId` of `tabId` just committed at `url`, or only the
// document armed when the browser puts the executor in; resolves once the executor is in (or
// could not go in): at once in the second case, where the read after the load needs no injection
// to wait for.
// `loadRead`: the agent's own load brought this document, and its executor is to read the page
// right after the load (readAtLoad in executor.js).
export function injectAtCommit(tabId, documentId, url, loadRead = null) {
  const target = { tabId, documentIds: [documentId] };
  const atCommit = (arm) => chrome.scripting.executeScript({ target, func: onCommit, args: [arm, loadRead], injectImmediately: true })
    .catch(() => {});
  // Once per document: a document a write's watch handled first goes without the read at its
  // load (the read is then asked for once the load is over).
  const last = injected.get(tabId);
  if (last && last.documentId === documentId) return last.underway;
  let underway = Promise.resolve();
  if (executorRegistered(url)) {
    // Its frames are armed at its first request, once they have loaded (the executor asks).
    atCommit(true);
  } else {
    underway = chrome.scripting.executeScript({ target, files: EXECUTOR_FILES, injectImmediately: true })
      .then(() => watchFrames(tabId), () => {});
    if (loadRead) atCommit(false);
  }
  injected.set(tabId, { documentId, underway });
  return underway;
}

// Run in the isolated world of a document just committed: its takeover watcher armed (`arm`), and
// its executor given `loadRead`, or, not in yet, left it to take when it comes in.
function onCommit(arm, loadRead) {
  const watch = globalThis.__tabwardenWatch;
  if (arm && watch) watch.arm();
  else if (arm) globalThis.__tabwardenArmAtStart = true; // this ran before the watcher: it arms itself
  if (!loadRead) return;
  const TW = globalThis.__tabwarden;
  if (TW && typeof TW.readAtLoad === "function") TW.readAtLoad(loadRead);
  else globalThis.__tabwardenReadAtLoad = loadRead;
}

// The injection at the tab's latest top-frame commit (a read after the load waits for it, so it
// finds the executor in place instead of injecting a second one).
export function injectionUnderway(tabId) {
  const last = injected.get(tabId);
  return last ? last.underway : Promise.resolve();
}

// A write may take its page elsewhere: while it runs, and for a moment after its answer (the new
// page commits about when the old one stops answering), each document committed in the tab's top
// frame gets the executor at once.
const WRITE_COMMIT_GRACE_MS = 3000;
const writing = new Map(); // tabId -> { count, timer }

function committedAfterWrite(details) {
  if (details.frameId !== 0 || !details.documentId || !writing.has(details.tabId)) return;
  agentAtWork(details.url); // a write that took the tab to another site: the agent works there now
  injectAtCommit(details.tabId, details.documentId, details.url);
}

// Watch `tabId`'s commits for the time of one write; the returned function ends the watch (after
// the grace).
function watchCommitsOfWrite(tabId) {
  const entry = writing.get(tabId) || { count: 0, timer: null };
  clearTimeout(entry.timer);
  entry.count += 1;
  writing.set(tabId, entry);
  const commits = chrome.webNavigation.onCommitted;
  if (!commits.hasListener(committedAfterWrite)) commits.addListener(committedAfterWrite);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    entry.count -= 1;
    if (entry.count > 0) return;
    entry.timer = setTimeout(() => {
      if (writing.get(tabId) !== entry || entry.count > 0) return;
      writing.delete(tabId);
      if (!writing.size) commits.removeListener(committedAfterWrite);
    }, WRITE_COMMIT_GRACE_MS);
  };
}

// A content call from the host; a write to a top frame watches the commits it may cause.
export async function callContentWatched(message, signal) {
  agentAtWork(message && message.expectUrl);
  const topFrameWrite = message && message.write && (message.frameId || 0) === 0 && Number.isInteger(message.tabId);
  if (!topFrameWrite) return callContent(message, signal);
  const end = watchCommitsOfWrite(message.tabId);
  try {
    return await callContent(message, signal);
  } finally {
    end();
  }
}
