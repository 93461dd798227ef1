// The executor, and the read, of a page the agent loads, without a round trip after the load.
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
import { EXECUTOR_FILES, watchFrames } from "./content-relay.js";

const READ_AT_LOAD_FILE = "content/read-at-load.js";
const LOAD_READ_DEADLINE_MS = 15000;

let nextLoad = 1;

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
// read_page it takes there if it has loaded by then. Resolves with `{ requestId, documentUrl, reply }`,
// or null where no read was taken (none asked, no site access, a page of the browser): the
// caller then reads the usual way.
export function injectAtCommit(tabId, documentId, readParams = null) {
  const target = { tabId, documentIds: [documentId] };
  const inject = (files) => chrome.scripting.executeScript({ target, files, injectImmediately: true })
    .then((results) => { watchFrames(tabId); return takenRead(results); }, () => null);
  if (!readParams) return inject(EXECUTOR_FILES);
  const request = { requestId: `l${nextLoad++}`, tool: "read_page", params: readParams, deadlineAt: Date.now() + LOAD_READ_DEADLINE_MS };
  const asked = chrome.scripting.executeScript({ target, func: readAtLoad, args: [request], injectImmediately: true })
    .then(takenRead, () => null);
  return firstRead([asked, inject([...EXECUTOR_FILES, READ_AT_LOAD_FILE])])
    .then((taken) => (taken ? { requestId: request.requestId, ...taken } : null));
}
