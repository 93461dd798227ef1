// run_javascript: the model's script in the page's MAIN world of the top frame, inside the dialog
// patch like every write. The host ran the gatekeeper first (a default rule denies the tool); this
// only runs the script and reports what happened, including a page policy that forbids it.
import { registerBrowserApi } from "./browser-api.js";
import { installDialogPatch, restoreDialogPatch } from "./dialog-patch.js";
import { CODES, failure } from "./failures.js";

const MAX_TIMEOUT_MS = 30000;
const MAX_RESULT_CHARS = 20000;
// A script that never yields (an endless loop) blocks the page: the worker stops waiting this
// long after the script's own limit, and gives the dialog restore this long on top.
const STUCK_SLACK_MS = 3000;
const RESTORE_WAIT_MS = 2000;
const MAX_SHOWN_VALUES = 20000; // values the result rendering visits before it gives up

function within(promise, ms, onTimeout) {
  let timer = null;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((resolve) => { timer = setTimeout(() => resolve(onTimeout), ms); }),
  ]);
}

// Serialised by chrome.scripting into the page: no closure survives, so everything it needs is
// inside. The code is the body of an async function: `return` gives the result, `await` works.
async function runInMainWorld(code, timeoutMs, maxChars, expectedOrigin, maxValues) {
  const clip = (text, n) => String(text).slice(0, n);
  // The page the gatekeeper judged, or nothing runs (it may have navigated since).
  if (expectedOrigin && location.origin !== expectedOrigin) {
    return { ok: false, kind: "target_changed", message: `the tab now shows ${clip(location.origin, 200)}` };
  }
  let body;
  try {
    const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
    body = new AsyncFunction(code);
  } catch (err) {
    const text = clip((err && err.message) || err, 1000);
    // String evaluation refused by the page's Content Security Policy (or Trusted Types).
    const blocked = (err && err.name === "EvalError") || /Content Security Policy|unsafe-eval|Trusted ?Type/i.test(text);
    return { ok: false, kind: blocked ? "csp" : "syntax", name: (err && err.name) || "Error", message: text };
  }
  let timer = null;
  const timedOut = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true }), timeoutMs);
  });
  let outcome;
  try {
    outcome = await Promise.race([body.call(window).then((value) => ({ value })), timedOut]);
  } catch (err) {
    const stack = String((err && err.stack) || "").split("\n").slice(0, 6).join("\n");
    return { ok: false, kind: "exception", name: (err && err.name) || typeof err, message: clip((err && err.message) || err, 1000),
             stack: clip(stack, 1500) };
  } finally {
    clearTimeout(timer);
  }
  if (outcome.timedOut) return { ok: false, kind: "timeout", message: `the script did not finish within ${timeoutMs} ms; it may still be running` };

  // A readable rendering of whatever came back: JSON where possible, elements by their tag,
  // cycles and functions named instead of failing.
  const seen = new WeakSet();
  let visited = 0;
  const element = (node) => {
    const id = node.id ? `#${node.id}` : "";
    const cls = typeof node.className === "string" && node.className.trim() ? `.${node.className.trim().split(/\s+/).join(".")}` : "";
    return `<${String(node.nodeName).toLowerCase()}${id}${cls}>`;
  };
  const replacer = (key, value) => {
    visited += 1;
    if (visited > maxValues) throw new RangeError(`more than ${maxValues} values`);
    if (typeof value === "bigint") return `${value}n`;
    if (typeof value === "function") return `[function ${value.name || "anonymous"}]`;
    if (typeof value === "symbol") return value.toString();
    if (value === undefined) return "[undefined]";
    if (typeof Node !== "undefined" && value instanceof Node) return value.nodeType === 1 ? element(value) : `[${value.nodeName}]`;
    if (value && typeof value === "object") {
      if (seen.has(value)) return "[circular]";
      seen.add(value);
      if (typeof value.length === "number" && !Array.isArray(value) && typeof value !== "string" && value[Symbol.iterator]) {
        return Array.from(value);
      }
    }
    return value;
  };
  const value = outcome.value;
  const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  let text;
  if (value === undefined) text = "undefined";
  else if (typeof value === "string") text = value;
  else {
    try {
      text = JSON.stringify(value, replacer, 1);
    } catch (err) {
      text = `[${type} that cannot be shown whole (${clip((err && err.message) || err, 200)}); return a smaller value]`;
    }
    if (text === undefined) text = String(value);
  }
  return { ok: true, type, text: text.slice(0, maxChars), length: text.length, truncated: text.length > maxChars };
}

async function runPageScript(tabId, code, timeoutMs, expectedOrigin) {
  if (typeof code !== "string" || !code) throw failure(CODES.INVALID_PARAMS, "run_javascript needs code");
  const limit = Math.min(Math.max(Number(timeoutMs) || 0, 0), MAX_TIMEOUT_MS);
  const patch = await installDialogPatch(tabId, 0); // throws safety_boundary_unavailable, nothing sent
  // Exactly the patched document: if the tab navigated meanwhile, nothing runs anywhere else.
  const target = patch.documentId ? { tabId, documentIds: [patch.documentId] } : { tabId, frameIds: [0] };
  const origin = typeof expectedOrigin === "string" ? expectedOrigin : "";
  let failure = null;
  const stuck = { stuck: true };
  const results = await within(chrome.scripting.executeScript({
    target, world: "MAIN", func: runInMainWorld, args: [code, limit, MAX_RESULT_CHARS, origin, MAX_SHOWN_VALUES],
  }).catch((err) => { failure = err; return null; }), limit + STUCK_SLACK_MS, stuck);
  const restore = await within(restoreDialogPatch(tabId, 0), RESTORE_WAIT_MS, { ok: false, reports: [], reason: "the page does not answer" });
  if (results === stuck) {
    return { ok: false, kind: "stuck", message: `the page has not come back from the script after ${limit + STUCK_SLACK_MS} ms `
             + "(an endless loop or a page that never yields); it may still be running", dialogs: restore.reports || [],
             dialogGuardRestored: !!restore.ok };
  }
  if (failure) {
    const text = String((failure && failure.message) || failure);
    if (/No document with id|Frame with ID 0 was removed|document.*(gone|removed)/i.test(text)) {
      return { ok: false, kind: "target_changed", message: "the page changed before the script could run", dialogs: [],
               dialogGuardRestored: !!restore.ok };
    }
    const code = /No tab with id/i.test(text) ? CODES.TAB_CLOSED : /Cannot access|permission/i.test(text) ? CODES.NO_SITE_ACCESS : CODES.BROWSER_API_ERROR;
    throw failure(code, `run_javascript: ${text}`);
  }
  const outcome = (results && results[0] && results[0].result) || { ok: false, kind: "no_answer", message: "the page gave no answer (it may have navigated away)" };
  return { ...outcome, dialogs: restore.reports || [], dialogGuardRestored: !!restore.ok };
}

export function installPageScript() {
  registerBrowserApi("page.runScript", runPageScript);
  // For tests and the worker console: the same call the host makes, with any expected origin.
  globalThis.tabwardenPageScript = { run: runPageScript };
}
