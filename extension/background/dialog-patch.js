// The MAIN-world dialog patch: for the duration of one write call, alert() is closed,
// confirm() answers false and prompt() answers null, each recorded; then the page's own
// functions are put back. Reads never patch. A depth counter lets nested writes share one patch.
// While it is in place it also counts the page's work in flight (requests, short timers; see
// countPendingWork) and announces each change as a `tabwarden:pending` event on the window
// (detail: the count), which the page executor's settle wait hears in its own world: it waits for
// what the write set off, not a fixed time. A page can fake the event; that only changes how
// long its own write waits.
import { CODES, failure } from "./failures.js";

const RESTORE_ATTEMPTS = 2;

// Runs in the page's MAIN world (serialised by chrome.scripting; no closure survives).
function installInPage() {
  // Count the page's work in flight until restoreInPage: fetch and XMLHttpRequest requests, and
  // short timers (a page often reverts or validates a value a moment later). A timer set by a
  // counted timer's own callback is not counted, so a page polling in a loop cannot hold the
  // write. What cannot be replaced is simply not counted (the dialogs are what the write needs).
  function countPendingWork(state) {
    const SHORT_TIMER_MS = 300;
    state.pending = 0;
    state.counting = [];
    const announce = (change) => {
      state.pending = Math.max(0, state.pending + change);
      try {
        window.dispatchEvent(new CustomEvent("tabwarden:pending", { detail: state.pending }));
      } catch (_) {
        // the page broke CustomEvent: the executor settles on mutations alone
      }
    };
    const replace = (holder, name, wrapper) => {
      const original = holder[name];
      try {
        holder[name] = wrapper(original);
        if (holder[name] !== original) state.counting.push({ holder, name, original, wrapper: holder[name] });
      } catch (_) {
        // not counted
      }
    };
    if (typeof window.fetch === "function") {
      replace(window, "fetch", (fetch) => function (...args) {
        announce(1);
        let answer;
        try {
          answer = fetch.apply(this, args);
        } catch (err) {
          announce(-1);
          throw err;
        }
        Promise.resolve(answer).then(() => announce(-1), () => announce(-1));
        return answer;
      });
    }
    const xhr = window.XMLHttpRequest && window.XMLHttpRequest.prototype;
    if (xhr && typeof xhr.send === "function") {
      replace(xhr, "send", (send) => function (...args) {
        announce(1);
        this.addEventListener("loadend", () => announce(-1), { once: true });
        return send.apply(this, args);
      });
    }
    const timers = new Set();
    let inCounted = 0;
    replace(window, "setTimeout", (setTimeout) => function (handler, delay, ...args) {
      if (inCounted || typeof handler !== "function" || !(Number(delay || 0) <= SHORT_TIMER_MS)) {
        return setTimeout.call(window, handler, delay, ...args);
      }
      let id = 0;
      const counted = function (...callArgs) {
        if (timers.delete(id)) announce(-1);
        inCounted += 1;
        try {
          return handler.apply(this, callArgs);
        } finally {
          inCounted -= 1;
        }
      };
      id = setTimeout.call(window, counted, delay, ...args);
      timers.add(id);
      announce(1);
      return id;
    });
    replace(window, "clearTimeout", (clearTimeout) => function (id) {
      if (timers.delete(id)) announce(-1);
      return clearTimeout.call(window, id);
    });
    // A page that asks for an animation frame may change itself in it: the executor then
    // waits for one rendered frame, and only then.
    replace(window, "requestAnimationFrame", (requestFrame) => function (...args) {
      try {
        window.dispatchEvent(new CustomEvent("tabwarden:frame"));
      } catch (_) {
        // the page broke CustomEvent: the executor waits for a frame anyway (no patch answered)
      }
      return requestFrame.apply(window, args);
    });
    // The executor asks whether the write runs under this patch (and so whether it hears of
    // the frames the page asks for).
    state.onProbe = () => {
      try {
        window.dispatchEvent(new CustomEvent("tabwarden:patched"));
      } catch (_) {
        // unanswered: the executor assumes no patch
      }
    };
    window.addEventListener("tabwarden:probe", state.onProbe);
  }

  const KEY = Symbol.for("tabwarden.dialogPatch");
  let state = window[KEY];
  if (!state) {
    state = { depth: 0, originals: null, patched: null, reports: [] };
    try {
      Object.defineProperty(window, KEY, { value: state, configurable: true });
    } catch (err) {
      return { ok: false, reason: `cannot keep patch state: ${err && err.message}` };
    }
  }
  if (state.depth === 0) {
    const clip = (value) => String(value === undefined ? "" : value).slice(0, 200);
    const patched = {
      alert(message) {
        state.reports.push({ kind: "alert", message: clip(message), answer: "closed" });
      },
      confirm(message) {
        state.reports.push({ kind: "confirm", message: clip(message), answer: false });
        return false;
      },
      prompt(message) {
        state.reports.push({ kind: "prompt", message: clip(message), answer: null });
        return null;
      },
      // Not a dialog, but a new browsing context the host should look for afterwards.
      open(...args) {
        // A page may declare a global function of its own named `open` (`function open() {}`
        // replaces window.open): calling that opens nothing, so it is not reported. A wrapper
        // the page assigned (usually calling the browser's) still is.
        if (ownOpen) return originals.open.apply(window, args);
        let url = "";
        try {
          url = args[0] === undefined || args[0] === "" ? "about:blank" : new URL(String(args[0]), location.href).href;
        } catch (_) {
          url = String(args[0]);
        }
        state.reports.push({ kind: "open", message: url.slice(0, 2000), answer: "opened" });
        return originals.open.apply(window, args);
      },
    };
    const originals = { alert: window.alert, confirm: window.confirm, prompt: window.prompt, open: window.open };
    // A global function declaration leaves the property non-configurable; the browser's own
    // window.open, and a function the page assigned to it, stay configurable.
    let ownOpen = false;
    try {
      const own = Object.getOwnPropertyDescriptor(window, "open");
      ownOpen = !!own && own.configurable === false &&
        !/\{\s*\[native code\]\s*\}\s*$/.test(Function.prototype.toString.call(originals.open));
    } catch (_) {
      ownOpen = false;
    }
    for (const name of Object.keys(patched)) {
      try {
        window[name] = patched[name];
      } catch (_) {
        // checked below
      }
      if (window[name] !== patched[name]) {
        for (const done of Object.keys(patched)) {
          try {
            if (window[done] === patched[done]) window[done] = originals[done];
          } catch (_) {
            // nothing more to do
          }
        }
        return { ok: false, reason: `window.${name} cannot be replaced in this page` };
      }
    }
    state.originals = originals;
    state.patched = patched;
    countPendingWork(state);
  }
  state.depth += 1;
  return { ok: true, depth: state.depth };
}

// Runs in the page's MAIN world: undo one level, hand back the dialogs seen.
function restoreInPage() {
  const state = window[Symbol.for("tabwarden.dialogPatch")];
  if (!state) return { ok: true, reports: [] };
  state.depth = Math.max(0, state.depth - 1);
  const reports = state.reports.splice(0, 50);
  state.reports.length = 0;
  if (state.depth > 0 || !state.originals) return { ok: true, reports };
  const stuck = [];
  for (const name of Object.keys(state.originals)) {
    try {
      window[name] = state.originals[name];
    } catch (_) {
      // checked below
    }
    if (window[name] !== state.originals[name]) stuck.push(name);
  }
  if (stuck.length) {
    state.depth = 1; // still installed: a retry may try again
    return { ok: false, reports, reason: `window.${stuck.join(", window.")} could not be restored` };
  }
  // Counting ends too; a function the page replaced in the meantime is left to the page.
  for (const { holder, name, original, wrapper } of state.counting || []) {
    try {
      if (holder[name] === wrapper) holder[name] = original;
    } catch (_) {
      // a frozen holder keeps the wrapper, which only counts
    }
  }
  if (state.onProbe) window.removeEventListener("tabwarden:probe", state.onProbe);
  state.onProbe = null;
  state.counting = null;
  state.originals = null;
  state.patched = null;
  return { ok: true, reports };
}

async function runInPage(tabId, frameId, func) {
  try {
    // Every frame we may access, so a dialog from a same-origin child frame is caught too.
    return await chrome.scripting.executeScript({ target: { tabId, allFrames: true }, world: "MAIN", func });
  } catch (_) {
    return chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, world: "MAIN", func });
  }
}

function frameResult(results, frameId) {
  const entry = (results || []).find((r) => r.frameId === frameId);
  return entry && entry.result;
}

function safetyFailure(message, phase, details) {
  return failure(CODES.SAFETY_BOUNDARY_UNAVAILABLE, message, phase, false, details);
}

// Install before a write. Throws safety_boundary_unavailable (precheck, not dispatched).
export async function installDialogPatch(tabId, frameId) {
  let results;
  try {
    results = await runInPage(tabId, frameId, installInPage);
  } catch (err) {
    throw safetyFailure(`the dialog guard could not be installed: ${String((err && err.message) || err)}; the action was not sent`, "precheck", { dispatched: false });
  }
  const outcome = frameResult(results, frameId);
  if (!outcome || !outcome.ok) {
    // Undo the frames that did install, so no half-patched page is left behind.
    await runInPage(tabId, frameId, restoreInPage).catch(() => {});
    const reason = (outcome && outcome.reason) || "no answer from the page";
    throw safetyFailure(`the dialog guard could not be installed (${reason}); the action was not sent`, "precheck", { dispatched: false });
  }
  const own = (results || []).find((r) => r.frameId === frameId);
  // The patched document: a caller that must act on exactly this document targets it by id.
  return { frames: (results || []).filter((r) => r.result && r.result.ok).map((r) => r.frameId),
           documentId: (own && own.documentId) || null };
}

// Restore after a write, trying twice. Returns { ok, attempts, reports, reason? }.
export async function restoreDialogPatch(tabId, frameId) {
  let last = { ok: false, reports: [], reason: "not attempted" };
  const reports = [];
  for (let attempt = 1; attempt <= RESTORE_ATTEMPTS; attempt++) {
    try {
      const results = await runInPage(tabId, frameId, restoreInPage);
      const failed = [];
      for (const entry of results || []) {
        if (!entry.result) continue;
        reports.push(...(entry.result.reports || []));
        if (!entry.result.ok) failed.push(entry.result.reason);
      }
      if (!failed.length) return { ok: true, attempts: attempt, reports };
      last = { ok: false, reason: failed.join("; ") };
    } catch (err) {
      last = { ok: false, reason: String((err && err.message) || err) };
    }
  }
  return { ok: false, attempts: RESTORE_ATTEMPTS, reports, reason: last.reason };
}
