// While the agent works in this browser, the browser itself puts the executor into the top frame
// of every page we may script, at document_idle (as the page's load ends): a page the agent loads
// (or one a write of its loads) then has it in place for the read that follows the load, with no
// injection from here (an injection reaches a page some 15 ms after its load: the browser reads
// the files again for each one and sends them only once it is done committing). At idle it never
// holds a page's load event. The registered copy is dormant: it listens for the worker's messages
// and does nothing else; a page cannot see it (isolated world); it arms the takeover watcher only
// on the worker's first request (takeover-watch.js). It still costs each page opened meanwhile a
// few milliseconds of parsing after its load, so it is kept only while the agent works:
// registered at the first page call from the host, unregistered after IDLE_MS without one or
// when the host goes.
import { EXECUTOR_FILES } from "./content-relay.js";

const SCRIPT_ID = "executor-at-work";
const IDLE_MS = 15 * 60 * 1000;

let wanted = false;
let inForce = false;
let idleTimer = null;
let chain = Promise.resolve();

async function registered() {
  return (await chrome.scripting.getRegisteredContentScripts({ ids: [SCRIPT_ID] })).length > 0;
}

async function register() {
  const script = {
    id: SCRIPT_ID, js: EXECUTOR_FILES, matches: ["<all_urls>"], allFrames: false, runAt: "document_idle", world: "ISOLATED",
    persistAcrossSessions: false,
  };
  if (await registered()) await chrome.scripting.updateContentScripts([script]);
  else await chrome.scripting.registerContentScripts([script]);
}

async function unregister() {
  if (await registered()) await chrome.scripting.unregisterContentScripts({ ids: [SCRIPT_ID] });
}

// Bring the registration in line with `wanted` as it is when this change's turn comes; every
// change of `wanted` queues one.
function settle() {
  chain = chain.then(async () => {
    const want = wanted;
    if (want) await register();
    else await unregister();
    inForce = want && wanted; // an end that came meanwhile queued its own change
  }).catch((err) => {
    inForce = false;
    wanted = false; // the next page call tries again
    console.warn("Tabwarden: the executor's registration did not change:", err);
  });
  return chain;
}

// A page call from the host: the agent is at work (the registration starts or lasts).
export function agentAtWork() {
  clearTimeout(idleTimer);
  idleTimer = setTimeout(agentIdle, IDLE_MS);
  if (wanted) return;
  wanted = true;
  settle();
}

// No page call for a while, or the host went: the pages opened from now on do without.
export function agentIdle() {
  clearTimeout(idleTimer);
  idleTimer = null;
  if (!wanted) return chain;
  wanted = false;
  inForce = false; // from now on a commit may or may not get the registered copy
  return settle();
}

// Whether a document committed now gets the executor from the browser (the registration is in
// force); when false, the worker injects it.
export function executorRegistered() {
  return inForce;
}

// For tests and the worker's console: the registration's state, and its end on demand.
export const executorAtWork = { state: () => ({ wanted, inForce }), end: agentIdle, settled: () => chain };

// A worker that starts knows of no work: a registration a previous worker left is removed.
settle();
