// The executor, and the read, of a page the agent loads, without a round trip after the load.
// The agent's own loads (navigate) and the loads its writes cause (a link, a submitted form) both
// put the executor into the new document at commit.
//
// At commit (`injectAtCommit`) the document gets the executor and is asked for the read the load
// wants. An injection made at commit on a small page usually runs once the page has loaded: the
// document then takes the read at once and the answer comes back with the injection. The request
// goes as a function of its own beside the files: it needs no file read, so it is usually there
// first, and the executor injected behind it takes it (read-at-load.js); should the executor be
// there first, the request's own injection has it take the read. A document still loading takes
// none (waiting in an injection would hold its load event): the caller reads after the load as
// before. The answer names the document's URL, so the caller can tell it is of the page the tab
// ended on.
import { callContent, EXECUTOR_FILES, watchFrames } from "./content-relay.js";

const READ_AT_LOAD_FILE = "content/read-at-load.js";
const LOAD_READ_DEADLINE_MS = 15000;

let nextLoad = 1;
const injections = new Map(); // tabId -> the promise of its latest injection at commit, while it runs

// Runs in the committed document's isolated world: the executor there takes the read if the
// document has loaded (its answer comes back as this injection's result); with none there yet,
// the request is left for the one injected next.
function readAtLoad(request) {
  const TW = globalThis.__tabwarden;
  if (TW && typeof TW.readIfLoaded === "function") return TW.readIfLoaded(request);
  globalThis.__tabwardenReadAtLoad = request;
  return null;
}

function takenRead(results) {
  const taken = results && results[0] && results[0].result;
  return taken && taken.reply && typeof taken.documentUrl === "string" ? taken : null;
}

// The first of `promises` to bring a read, or null once none did.
function firstRead(promises) {
  return new Promise((resolve) => {
    let left = promises.length;
    for (const promise of promises) {
      promise.then((read) => {
        if (read) resolve(read);
        else if (--left === 0) resolve(null);
      });
    }
  });
}

// The executor into the document a load of the agent's committed, and, with `readParams`, the
// read_page it takes there if it has loaded by then. Resolves with
// `{ requestId, documentUrl, reply }`, or null where no read was taken (none asked, no site
// access, a page of the browser): the caller then reads the usual way.
export function injectAtCommit(tabId, documentId, readParams = null) {
  const target = { tabId, documentIds: [documentId] };
  const inject = (files) => chrome.scripting.executeScript({ target, files, injectImmediately: true })
    .then((results) => { watchFrames(tabId); return takenRead(results); }, () => null);
  let underway;
  if (!readParams) {
    underway = inject(EXECUTOR_FILES);
  } else {
    const deadlineAt = Date.now() + LOAD_READ_DEADLINE_MS;
    const request = { requestId: `l${nextLoad++}`, tool: "read_page", params: readParams, deadlineAt };
    const asked = chrome.scripting.executeScript({ target, func: readAtLoad, args: [request], injectImmediately: true })
      .then(takenRead, () => null);
    underway = firstRead([asked, inject([...EXECUTOR_FILES, READ_AT_LOAD_FILE])])
      .then((taken) => (taken ? { requestId: request.requestId, ...taken } : null));
  }
  injections.set(tabId, underway);
  underway.then(() => { if (injections.get(tabId) === underway) injections.delete(tabId); });
  return underway;
}

// The injection at the tab's latest main-frame commit while it runs (a read after the load waits
// for it, so it finds the executor in place instead of injecting a second one), else null.
export function injectionUnderway(tabId) {
  return injections.get(tabId) || Promise.resolve(null);
}

// A write may take its page elsewhere (a link, a submitted form): while it runs, and for a moment
// after its answer (the new page commits about when the old one stops answering), each document
// committed in the tab's top frame gets the executor at once, as the agent's own loads do.
const WRITE_COMMIT_GRACE_MS = 3000;
const writing = new Map(); // tabId -> { count, timer }

function committedAfterWrite(details) {
  if (details.frameId !== 0 || !details.documentId || !writing.has(details.tabId)) return;
  injectAtCommit(details.tabId, details.documentId);
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
      if (!writing.size) chrome.webNavigation.onCommitted.removeListener(committedAfterWrite);
    }, WRITE_COMMIT_GRACE_MS);
  };
}

// A content call from the host; a write to a top frame watches the commits it may cause.
export async function callContentWatched(message, signal) {
  const topFrameWrite = message && message.write && (message.frameId || 0) === 0 && Number.isInteger(message.tabId);
  if (!topFrameWrite) return callContent(message, signal);
  const end = watchCommitsOfWrite(message.tabId);
  try {
    return await callContent(message, signal);
  } finally {
    end();
  }
}
