// The MAIN-world dialog patch: for the duration of one write call, alert() is closed,
// confirm() answers false and prompt() answers null, each recorded; then the page's own
// functions are put back. Reads never patch. One write at a time per tab runs under the patch: a
// write that finds another's patch still in place (one the host gave up waiting for) waits for
// its restore. While it is in place it also counts the page's work in flight (requests, short
// timers; see the counting below) and announces each change as an event on the window (detail:
// the count), which the page executor's settle wait hears in its own world: it waits for what the
// write set off, not a fixed time.
//
// The page shares the main world with the patch, so nothing of the patch's is left where a page
// can find it by name or set it beforehand: its state lives in the closure of the injected
// function, and the worker holds a random secret made for that one write. The restore reaches the
// closure only by calling one of our own replacement functions with the secret, the one argument
// they answer with the patch's controls (the browser's functions, given a string, do nothing or
// throw), and only in the documents the patch went into. A page cannot pre-seed what it cannot
// name, and the dialogs and pop-ups reported are only those it really asked for. While in place,
// the replacements look native: Function.prototype.toString (itself replaced for the write) gives
// the text of the function each one stands for, and each has its name and length.
//
// The events between the patch and the executor (the work in flight, a frame asked for, the
// executor's probe and the patch's answer) are named afresh for every write, with random names
// the worker gives both sides (content-relay.js tells the executor): a page cannot listen for
// them without knowing them, and events it sends under a fixed, guessed or earlier write's name
// reach nobody.
//
// What a page can still see: that alert and the others are not the functions it kept from before
// the write (an identity check); the write's events, under names that mean nothing, if it hooked
// dispatchEvent, addEventListener or CustomEvent before we ran (and then it could send them
// itself for the rest of that write, which only changes how long its own write waits); and our
// source through a toString of a realm we did not patch (a frame it makes during the write). A
// page that replaced built-ins before we ran (a Proxy for alert, a setter on Array.prototype) can
// watch and upset what runs in its world, the restore included; it could as well keep its own
// alert and open a real dialog. The guard is for pages that do not fight it.
import { CODES, failure } from "./failures.js";

const RESTORE_ATTEMPTS = 2;
// The longest a write waits for another write's patch in the same tab to be restored.
const SECTION_WAIT_MS = 10000;

// Per tab while a patch is in place: { secret, channels (the write's event names), documents (ids
// of the documents patched), done (settles when it is restored or given up), release }.
const sections = new Map();

function newSecret() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

// One write's event names, each random on its own: none says what it is or whose it is, and none
// can be told from another write's.
function newChannels() {
  return { pending: newSecret(), frame: newSecret(), probe: newSecret(), patched: newSecret() };
}

// Runs in the page's MAIN world (serialised by chrome.scripting: nothing outside it survives).
function installInPage(secret, channels) {
  "use strict";
  const isDialog = (name) => name === "alert" || name === "confirm" || name === "prompt" || name === "open";
  let closed = false;
  const reports = [];
  // Added by index, not with push(): a page may have replaced Array.prototype.push.
  const record = (entry) => { reports[reports.length] = entry; };
  // What we replaced, as [holder, name, original, ours] rows, and each replacement's original
  // (for the native look); searched with === in plain loops, with no built-in a page may hook.
  const replaced = [];
  const standsFor = [];
  const originalOf = (fn) => {
    for (let i = 0; i < standsFor.length; i += 2) if (standsFor[i] === fn) return standsFor[i + 1];
    return undefined;
  };
  const lookAlike = (ours, original) => {
    for (const key of ["name", "length"]) {
      try {
        Object.defineProperty(ours, key, { value: original[key], configurable: true });
      } catch (_) {
        // the method's own name and length stay
      }
    }
    standsFor[standsFor.length] = ours;
    standsFor[standsFor.length] = original;
    return ours;
  };
  // Put make(original) in place of holder[name]. Replacements are methods, so like built-ins
  // they have no prototype. Returns whether ours is now in place.
  const replace = (holder, name, make) => {
    try {
      const original = holder[name];
      if (typeof original !== "function") return false;
      const ours = lookAlike(make(original), original);
      holder[name] = ours;
      if (holder[name] !== ours) return false;
      replaced[replaced.length] = [holder, name, original, ours];
      return true;
    } catch (_) {
      return false;
    }
  };
  // Whether the original is back (or the page put something of its own there meanwhile).
  const putBack = ([holder, name, original, ours]) => {
    try {
      if (holder[name] === ours) holder[name] = original;
      return holder[name] !== ours;
    } catch (_) {
      return false;
    }
  };
  let onProbe = null;
  const undoAll = () => {
    if (onProbe) {
      try {
        window.removeEventListener(channels.probe, onProbe);
      } catch (_) {
        // the probe goes on being answered, nothing more
      }
    }
    // The way back (toString, replaced first) goes last. A function the page replaced in the
    // meantime is left to the page; a frozen holder keeps our wrapper, which only counts.
    for (let i = replaced.length - 1; i >= 0; i--) if (!isDialog(replaced[i][1])) putBack(replaced[i]);
    closed = true;
  };

  const controls = {
    secret,
    // Hand back the dialogs seen and put everything back; the dialogs first, as the write needs.
    leave() {
      const handed = [];
      for (let i = 0; i < reports.length && i < 50; i++) handed[i] = reports[i];
      reports.length = 0;
      const stuck = [];
      for (const row of replaced) if (isDialog(row[1]) && !putBack(row)) stuck[stuck.length] = row[1];
      if (stuck.length) return { ok: false, reports: handed, reason: `window.${stuck.join(", window.")} could not be restored` };
      undoAll();
      return { ok: true, reports: handed };
    },
  };

  // Function.prototype.toString first: every replacement then reads as the function it stands
  // for, and the secret reaches the controls through it.
  const toStringOf = Function.prototype.toString;
  replace(Function.prototype, "toString", (original) => ({
    toString() {
      if (this === secret && !closed) return controls;
      const stands = originalOf(this);
      return original.call(stands === undefined ? this : stands);
    },
  }).toString);

  const clip = (value) => String(value === undefined ? "" : value).slice(0, 200);
  // A global function declaration leaves the property non-configurable; the browser's own
  // window.open, and a function the page assigned to it, stay configurable.
  let ownOpen = false;
  try {
    const own = Object.getOwnPropertyDescriptor(window, "open");
    ownOpen = !!own && own.configurable === false &&
      !/\{\s*\[native code\]\s*\}\s*$/.test(toStringOf.call(window.open));
  } catch (_) {
    ownOpen = false;
  }
  const dialogs = {
    alert: () => ({
      alert(...args) {
        record({ kind: "alert", message: clip(args[0]), answer: "closed" });
      },
    }).alert,
    confirm: () => ({
      confirm(...args) {
        record({ kind: "confirm", message: clip(args[0]), answer: false });
        return false;
      },
    }).confirm,
    prompt: () => ({
      prompt(...args) {
        record({ kind: "prompt", message: clip(args[0]), answer: null });
        return null;
      },
    }).prompt,
    // Not a dialog, but a new browsing context the host should look for afterwards.
    open: (open) => ({
      open(...args) {
        // A page may declare a global function of its own named `open` (`function open() {}`
        // replaces window.open): calling that opens nothing, so it is not reported. A wrapper
        // the page assigned (usually calling the browser's) still is.
        if (ownOpen) return open.apply(window, args);
        let url = "";
        try {
          url = args[0] === undefined || args[0] === "" ? "about:blank" : new URL(String(args[0]), location.href).href;
        } catch (_) {
          url = String(args[0]);
        }
        record({ kind: "open", message: url.slice(0, 2000), answer: "opened" });
        return open.apply(window, args);
      },
    }).open,
  };
  for (const name of ["alert", "confirm", "prompt", "open"]) {
    if (replace(window, name, dialogs[name])) continue;
    for (const row of replaced) if (isDialog(row[1])) putBack(row);
    undoAll();
    return { ok: false, reason: `window.${name} cannot be replaced in this page` };
  }

  // Count the page's work in flight until the restore: fetch and XMLHttpRequest requests, and
  // short timers (a page often reverts or validates a value a moment later). A timer set by a
  // counted timer's own callback is not counted, so a page polling in a loop cannot hold the
  // write. What cannot be replaced is simply not counted (the dialogs are what the write needs).
  const SHORT_TIMER_MS = 300;
  let pending = 0;
  const announce = (change) => {
    pending = Math.max(0, pending + change);
    try {
      window.dispatchEvent(new CustomEvent(channels.pending, { detail: pending }));
    } catch (_) {
      // the page broke CustomEvent: the executor settles on mutations alone
    }
  };
  replace(window, "fetch", (fetch) => ({
    fetch(...args) {
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
    },
  }).fetch);
  const xhr = window.XMLHttpRequest && window.XMLHttpRequest.prototype;
  if (xhr) {
    replace(xhr, "send", (send) => ({
      send(...args) {
        announce(1);
        this.addEventListener("loadend", () => announce(-1), { once: true });
        return send.apply(this, args);
      },
    }).send);
  }
  const timers = new Set();
  let inCounted = 0;
  replace(window, "setTimeout", (setTimeout) => ({
    setTimeout(handler, delay, ...args) {
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
    },
  }).setTimeout);
  // Also a way back to the controls, where Function.prototype is frozen.
  replace(window, "clearTimeout", (clearTimeout) => ({
    clearTimeout(id) {
      if (id === secret && !closed) return controls;
      if (timers.delete(id)) announce(-1);
      return clearTimeout.call(window, id);
    },
  }).clearTimeout);
  // A page that asks for an animation frame may change itself in it: the executor then
  // waits for one rendered frame, and only then.
  replace(window, "requestAnimationFrame", (requestFrame) => ({
    requestAnimationFrame(...args) {
      if (args[0] === secret && !closed) return controls;
      try {
        window.dispatchEvent(new CustomEvent(channels.frame));
      } catch (_) {
        // the page broke CustomEvent: the executor waits for a frame anyway (no patch answered)
      }
      return requestFrame.apply(window, args);
    },
  }).requestAnimationFrame);
  // The executor asks whether the write runs under this patch (and so whether it hears of
  // the frames the page asks for).
  onProbe = () => {
    try {
      window.dispatchEvent(new CustomEvent(channels.patched));
    } catch (_) {
      // unanswered: the executor assumes no patch
    }
  };
  try {
    window.addEventListener(channels.probe, onProbe);
  } catch (_) {
    // unanswered: the executor waits for a frame after every write
  }

  // Without a way back the patch could never be undone: then none at all.
  const wayBack = replaced.some(([holder, name]) => (holder === Function.prototype && name === "toString") ||
    (holder === window && (name === "clearTimeout" || name === "requestAnimationFrame")));
  if (!wayBack) {
    for (const row of replaced) if (isDialog(row[1])) putBack(row);
    undoAll();
    return { ok: false, reason: "none of the functions that lead back to the patch can be replaced in this page" };
  }
  return { ok: true };
}

// Runs in the page's MAIN world of a document the patch went into: put the page's functions
// back and hand over the dialogs seen. `found`: whether the patch answered.
function restoreInPage(secret) {
  "use strict";
  const asks = [() => Function.prototype.toString.call(secret), () => window.clearTimeout(secret),
    () => window.requestAnimationFrame(secret)];
  for (const ask of asks) {
    let answer = null;
    try {
      answer = ask();
    } catch (_) {
      continue; // not ours
    }
    if (answer === null || typeof answer !== "object" || answer.secret !== secret) continue;
    const outcome = answer.leave();
    return { ok: !!outcome.ok, reports: Array.isArray(outcome.reports) ? outcome.reports : [], reason: outcome.reason,
             found: true };
  }
  return { ok: false, reports: [], found: false,
           reason: "the guard cannot be reached any more (the page replaced the functions that lead back to it)" };
}

function safetyFailure(message, phase, details) {
  return failure(CODES.SAFETY_BOUNDARY_UNAVAILABLE, message, phase, false, details);
}

// Wait for the tab's patched section to end, if one is open; then open ours.
async function openSection(tabId) {
  const until = Date.now() + SECTION_WAIT_MS;
  for (let open = sections.get(tabId); open; open = sections.get(tabId)) {
    const left = until - Date.now();
    let timer = null;
    const timedOut = await Promise.race([
      open.done.then(() => false),
      new Promise((resolve) => { timer = setTimeout(() => resolve(true), Math.max(0, left)); }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      throw safetyFailure("another write's dialog guard is still in place in this tab; the action was not sent", "precheck",
                          { dispatched: false });
    }
  }
  let release = null;
  const done = new Promise((resolve) => { release = resolve; });
  const section = { secret: newSecret(), channels: newChannels(), documents: new Set(), done, release };
  sections.set(tabId, section);
  return section;
}

function closeSection(tabId, section) {
  if (sections.get(tabId) === section) sections.delete(tabId);
  section.release();
}

// Install before a write. Throws safety_boundary_unavailable (precheck, not dispatched).
export async function installDialogPatch(tabId, frameId) {
  const section = await openSection(tabId);
  const run = (target) => chrome.scripting.executeScript({ target, world: "MAIN", func: installInPage,
    args: [section.secret, section.channels] });
  let results;
  try {
    // Every frame we may access, so a dialog from a same-origin child frame is caught too.
    results = await run({ tabId, allFrames: true }).catch(() => run({ tabId, frameIds: [frameId] }));
  } catch (err) {
    closeSection(tabId, section);
    throw safetyFailure(`the dialog guard could not be installed: ${String((err && err.message) || err)}; the action was not sent`, "precheck", { dispatched: false });
  }
  const installed = (results || []).filter((r) => r.result && r.result.ok);
  for (const entry of installed) section.documents.add(entry.documentId);
  const own = (results || []).find((r) => r.frameId === frameId);
  const outcome = own && own.result;
  if (!outcome || !outcome.ok) {
    // Undo the frames that did install, so no half-patched page is left behind.
    await restoreDialogPatch(tabId, frameId).catch(() => {});
    const reason = (outcome && outcome.reason) || "no answer from the page";
    throw safetyFailure(`the dialog guard could not be installed (${reason}); the action was not sent`, "precheck", { dispatched: false });
  }
  // The patched document: a caller that must act on exactly this document targets it by id. The
  // write's event names go to the executor that runs it (and nowhere else).
  return { frames: installed.map((r) => r.frameId), documentId: (own && own.documentId) || null,
           channels: { ...section.channels } };
}

// The documents of the section that are still in the tab (a frame may have navigated since).
async function patchedDocuments(tabId, section) {
  try {
    const frames = await chrome.webNavigation.getAllFrames({ tabId });
    return (frames || []).map((frame) => frame.documentId).filter((id) => section.documents.has(id));
  } catch (_) {
    return [...section.documents];
  }
}

// Restore after a write, trying twice. Returns { ok, attempts, reports, reason? }. Only the
// documents patched are asked (the secret goes nowhere else); a document gone since has taken
// the patch with it.
export async function restoreDialogPatch(tabId, _frameId) {
  const section = sections.get(tabId);
  if (!section) return { ok: true, attempts: 0, reports: [] }; // nothing installed
  let last = { ok: false, reason: "not attempted" };
  const reports = [];
  for (let attempt = 1; attempt <= RESTORE_ATTEMPTS; attempt++) {
    try {
      const documentIds = await patchedDocuments(tabId, section);
      const results = documentIds.length ? await chrome.scripting.executeScript({
        target: { tabId, documentIds }, world: "MAIN", func: restoreInPage, args: [section.secret],
      }) : [];
      const failed = [];
      for (const entry of results || []) {
        const result = entry.result;
        if (!result) continue;
        reports.push(...(result.reports || []));
        if (result.ok) section.documents.delete(entry.documentId);
        else failed.push(result.reason);
      }
      if (!failed.length) {
        closeSection(tabId, section);
        return { ok: true, attempts: attempt, reports };
      }
      last = { ok: false, reason: failed.join("; ") };
    } catch (err) {
      last = { ok: false, reason: String((err && err.message) || err) };
    }
  }
  // Given up: the next write in this tab patches afresh; the host tells of the failure.
  closeSection(tabId, section);
  return { ok: false, attempts: RESTORE_ATTEMPTS, reports, reason: last.reason };
}
