// Tabwarden page executor, part 1: the shared namespace, structured failures and small helpers.
// Content scripts cannot be modules, so every part is a classic script injected in order by
// background/content-relay.js. They share one object on the isolated world's window; each part
// registers its name there and does nothing when it runs a second time (double injection).
(() => {
  const existing = globalThis.__tabwarden;
  // An executor left behind by a reloaded extension has lost its runtime: start afresh.
  const orphaned = existing && !(chrome.runtime && chrome.runtime.id);
  const TW = (globalThis.__tabwarden = existing && !orphaned ? existing : { parts: new Set() });
  if (TW.parts.has("core")) return;
  TW.parts.add("core");

  // What we draw into a page (the action highlight, the indicator) is a plain element with no
  // attributes and a closed shadow root: nothing about it names us, so a page cannot find it by a
  // tag, an attribute or a selector. We know our own by reference, held here in the isolated
  // world; a removed one stays known, so a mutation record of its removal is ours too.
  const ownHosts = new WeakSet();
  TW.ownHost = () => {
    const host = document.createElement("div");
    ownHosts.add(host);
    return host;
  };
  TW.isOverlayNode = (node) => {
    for (let at = node; at; at = at.parentNode || (at.nodeType === 11 ? at.host : null)) {
      if (ownHosts.has(at)) return true;
    }
    return false;
  };

  // The failure codes the host declares (generated/tools.js, injected before every part); every
  // part names its codes from here, so none can drift from the host's list.
  const CODES = (TW.codes = globalThis.__tabwardenTools.codes);

  // A failure the host can act on: stable code, the phase it happened in, and whether trying
  // again (after read_page) can help. Every failure the page reports is one of these, made with
  // `TW.fail` (or a helper below), and reaches the worker through `toWire`.
  class ActionFailure extends Error {
    constructor(code, message, phase = "execute", retryable = false, details = undefined) {
      super(message);
      this.code = code;
      this.phase = phase;
      this.retryable = retryable;
      if (details) this.details = details;
    }

    toWire() {
      const failure = { code: this.code, message: this.message, phase: this.phase, retryable: this.retryable };
      if (this.details) failure.details = this.details;
      return failure;
    }
  }
  TW.ActionFailure = ActionFailure;
  TW.fail = (code, message, phase, retryable, details) => new ActionFailure(code, message, phase, retryable, details);

  TW.staleRef = (ref, why) =>
    new ActionFailure(
      CODES.STALE_REF,
      `ref ${JSON.stringify(ref)} is stale (${why}); call read_page again and use a ref from the new snapshot`,
      "resolve",
      true,
    );

  TW.collapse = (text) => String(text || "").replace(/\s+/g, " ").trim();
  // Cut to `limit` characters, the last being an ellipsis, so the reader knows text is missing.
  TW.clip = (text, limit) => (text.length > limit ? text.slice(0, limit - 3) + "…" : text);
  TW.quote = (text) => JSON.stringify(text);

  // The declared messages to and from the service worker (generated/content-protocol.js, injected
  // before every part).
  const CONTENT = globalThis.__tabwardenContent;
  // The longest wait the worker times; a longer one asked of it ends after this.
  const MAX_WORKER_SLEEP_MS = CONTENT.MESSAGES[CONTENT.TYPES.TIMER_SLEEP].ms.maximum;

  // Chrome wakes the timers of a hidden tab about once a second, and the agent mostly works in
  // background tabs: there, waits are timed by the service worker, whose timers run on time.
  // Without the worker's `true` (no worker, or it refused) the page times the wait itself.
  function wake(ms) {
    const ownTimer = () => new Promise((resolve) => setTimeout(resolve, ms));
    if (!document.hidden) return ownTimer();
    const request = CONTENT.message(CONTENT.TYPES.TIMER_SLEEP, { ms: Math.min(ms, MAX_WORKER_SLEEP_MS) || 0 });
    return chrome.runtime.sendMessage(request).then((slept) => (slept === true ? undefined : ownTimer()), ownTimer);
  }

  TW.sleep = (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal && signal.aborted) return reject(TW.abortedFailure());
      let settled = false;
      const onAbort = () => {
        if (settled) return;
        settled = true;
        reject(TW.abortedFailure());
      };
      if (signal) signal.addEventListener("abort", onAbort, { once: true });
      wake(Math.max(0, ms)).then(() => {
        if (signal) signal.removeEventListener("abort", onAbort);
        if (settled) return;
        settled = true;
        resolve();
      });
    });

  TW.abortedFailure = () => new ActionFailure(CODES.ABORTED, "the host cancelled this request", "execute", false);
  TW.checkAborted = (signal) => {
    if (signal && signal.aborted) throw TW.abortedFailure();
  };

  // Per-document identity, fixed for the life of this document and this executor, new after
  // navigation or re-injection. Four random base-36 characters: every ref carries it, so its
  // length is paid on every line the model reads; telling one document from the next (a one in
  // 1.7 million chance of a clash, and then the snapshot number must match too) needs no more.
  const TOKEN_SPACE = 36 ** 4;
  const tokens = new WeakMap();
  TW.documentToken = (doc = document) => {
    let token = tokens.get(doc);
    if (!token) {
      const [word] = crypto.getRandomValues(new Uint32Array(1));
      token = (word % TOKEN_SPACE).toString(36).padStart(4, "0");
      tokens.set(doc, token);
    }
    return token;
  };

  TW.sameOriginAsTop = (doc) => {
    try {
      return doc.defaultView.location.origin === window.location.origin;
    } catch (_) {
      return false;
    }
  };

  // A short human description of an element for messages ("button#save.primary").
  TW.describe = (el) => {
    if (!el || el.nodeType !== 1) return String(el);
    let text = el.localName;
    if (el.id) text += `#${el.id}`;
    const classes = typeof el.className === "string" ? el.className.trim().split(/\s+/).filter(Boolean).slice(0, 2) : [];
    for (const name of classes) text += `.${name}`;
    return text;
  };

  TW.state = {
    snapshotCounter: 0, // every snapshot of this executor, reads and post-write ones alike
    snapshot: null, // the current snapshot: { id, token, refs: Map, lines, ... }
    priorHints: new Map(), // older refs -> { hint, identity }, oldest first, bounded
    // element -> { ref, hint, token } of the last snapshot that named it: an element a snapshot
    // left out (hidden behind a modal, scrolled out of a virtual list) gets its ref back when it
    // returns unchanged in role and name.
    earlierRefs: new WeakMap(),
    readAtLoad: false, // this document took on the read of the agent's load that brought it
    activeRequests: 0,
    changedSinceSnapshot: true, // the page changed since the current snapshot (no snapshot yet: unknown)
  };
})();
