// While the agent works in this browser, the browser itself puts the executor into the top frame
// of the pages of the sites it works on, at document_idle: a page the agent loads there (or one a
// write of its loads) then has it in place for the read that follows the load, with no injection
// from here (an injection reaches a page some 15 ms after its load: the browser reads the files
// again for each one and sends them only once it is done committing). The registered copy is
// dormant: it listens for the worker's messages and does nothing else; a page cannot see it
// (isolated world); it arms the takeover watcher only on the worker's first request
// (takeover-watch.js). It still costs each page of those sites opened meanwhile a few
// milliseconds of parsing (before its load event when the page has nothing left to fetch), so it
// is kept to the sites the agent loads or acts on, and only while it works: a site is added at
// the first page call there, and the registration goes after IDLE_MS without a page call or when
// the host goes. A page of a site added since it committed gets the injection instead.
import { EXECUTOR_FILES } from "./content-relay.js";

const SCRIPT_ID = "executor-at-work";
const IDLE_MS = 15 * 60 * 1000;

let wanted = new Set(); // the match patterns of the sites the agent works on
let inForce = new Set(); // those the registration in the browser has
let present = null; // whether the browser holds our registration; null until asked
let idleTimer = null;
let chain = Promise.resolve();

// The match pattern for the pages of `url`'s site (any port), or null for a page we never script
// this way.
function siteOf(url) {
  try {
    const { protocol, hostname } = new URL(url);
    return /^https?:$/.test(protocol) && hostname ? `${protocol}//${hostname}/*` : null;
  } catch (_) {
    return null;
  }
}

// Asked once (a worker before this one may have left it), then known from our own changes.
async function registered() {
  if (present === null) present = (await chrome.scripting.getRegisteredContentScripts({ ids: [SCRIPT_ID] })).length > 0;
  return present;
}

async function register(matches) {
  const script = {
    id: SCRIPT_ID, js: EXECUTOR_FILES, matches, allFrames: false, runAt: "document_idle", world: "ISOLATED",
    persistAcrossSessions: false,
  };
  if (await registered()) await chrome.scripting.updateContentScripts([script]);
  else await chrome.scripting.registerContentScripts([script]);
  present = true;
}

async function unregister() {
  if (await registered()) await chrome.scripting.unregisterContentScripts({ ids: [SCRIPT_ID] });
  present = false;
}

// Bring the registration in line with `wanted` as it is when this change's turn comes; every
// change of `wanted` queues one.
function settle() {
  chain = chain.then(async () => {
    const want = [...wanted];
    if (want.length) await register(want);
    else await unregister();
    inForce = new Set(want.filter((site) => wanted.has(site))); // sites dropped meanwhile queued their own change
  }).catch((err) => {
    inForce = new Set();
    wanted = new Set(); // the next page call tries again
    present = null;
    console.warn("Tabwarden: the executor's registration did not change:", err);
  });
  return chain;
}

// A page call from the host for the page at `url` (a load, a write, a read): the agent works on
// its site, and goes on working (the idle time starts again).
export function agentAtWork(url) {
  clearTimeout(idleTimer);
  idleTimer = setTimeout(agentIdle, IDLE_MS);
  const site = typeof url === "string" ? siteOf(url) : null;
  if (!site || wanted.has(site)) return;
  wanted = new Set([...wanted, site]);
  settle();
}

// No page call for a while, or the host went: the pages opened from now on do without.
export function agentIdle() {
  clearTimeout(idleTimer);
  idleTimer = null;
  if (!wanted.size) return chain;
  wanted = new Set();
  inForce = new Set(); // from now on a commit may or may not get the registered copy
  return settle();
}

// Whether a document committed now at `url` gets the executor from the browser (the registration
// for its site is in force); when false, the worker injects it.
export function executorRegistered(url) {
  const site = siteOf(url);
  return !!site && inForce.has(site);
}

// For tests and the worker's console: the registration's state, and its end on demand.
export const executorAtWork = { state: () => ({ sites: [...wanted], inForce: [...inForce] }), end: agentIdle };

// A worker that starts knows of no work: a registration a previous worker left is removed.
settle();
