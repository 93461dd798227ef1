// Manual takeover: a trusted mouse press or key press in a tab the agent is driving means a person
// is using it; the service worker passes that to the host, which pauses the threads driving the
// tab. The watcher runs in every frame the extension may script, since a frame's events never
// reach its parent. Our own synthetic events are never trusted; the worker filters the debugger's
// trusted input itself.
//
// A page must not be able to hide a person from us. The worker registers this file to run at
// document_start in every frame of every site we may script (content-relay.js), so its capture
// listeners on window are the first of all: a page's own, added later, run after ours, and its
// stopImmediatePropagation() cannot stop a press before we hear it. We listen to pointerdown too,
// because a page that cancels pointerdown keeps the browser from firing mousedown at all.
// It stays quiet until its document is driven (most pages are never driven): the worker arms it,
// or the executor of its frame does on the worker's first request there. The executor being there
// is not enough: while the agent works, the browser puts a dormant executor into every page of
// its sites.
//
// A document already open when the script was registered (or before its site was granted) gets
// the watcher late, as the executor arrives, after the page's own listeners: there a page can
// still stop the events before us (a press on the page indicator's buttons too). For those the
// watcher also looks, a few times a second while the page is shown, for a new user activation
// that none of its listeners heard: the browser grants one for a person's press whatever the
// page's listeners do. What remains unheard there: a press while an earlier activation (less than
// about five seconds old) is still active, and a page that consumes the activation at once (by
// opening a pop-up, say) before we look.
(() => {
  // Kept in this isolated world, where the page cannot see or pre-set it.
  const existing = globalThis.__tabwardenWatch;
  if (existing && existing.alive()) return;
  const REPORT_GAP_MS = 1000;
  const ACTIVATION_POLL_MS = 250;
  const HEARD_MS = 1000; // an activation this soon after a press we heard is that press
  const CONTENT = globalThis.__tabwardenContent; // injected right before this file, always
  const { TYPES } = CONTENT;
  // Before any page script can have run: nothing has been parsed into the document yet.
  const early = document.readyState === "loading" && !document.head && !document.body;
  let armed = false;
  let lastReport = 0;
  let lastHeard = 0;

  const watch = (globalThis.__tabwardenWatch = {
    alive: () => !!(chrome.runtime && chrome.runtime.id),
    armed: () => armed,
    arm() {
      if (armed) return;
      armed = true;
      if (!early) startActivationWatch();
    },
  });

  function tell(type, fields) {
    const message = CONTENT.message(type, fields);
    try {
      chrome.runtime.sendMessage(message).catch(() => {});
    } catch (_) {
      // the extension was reloaded: nobody to tell
    }
  }

  function report(kind) {
    const now = Date.now();
    if (now - lastReport < REPORT_GAP_MS) return;
    lastReport = now;
    const TW = globalThis.__tabwarden; // the executor, where it runs (the top frame)
    // The worker takes the tab, frame and URL from the sender.
    tell(TYPES.TAKEOVER_MANUAL_INPUT, { kind, duringAgentRequest: !!(TW && TW.state.activeRequests > 0) });
  }

  function heard(event) {
    if (!event.isTrusted) return;
    lastHeard = Date.now();
    if (!armed) return;
    const TW = globalThis.__tabwarden;
    if (TW && TW.isOverlayNode(event.target)) return; // our own indicator is not the page
    report(event.type === "keydown" ? "keydown" : "mousedown");
  }

  function startActivationWatch() {
    const activation = navigator.userActivation;
    if (!activation) return;
    let wasActive = activation.isActive;
    setInterval(() => {
      const active = activation.isActive;
      const rose = active && !wasActive;
      wasActive = active;
      // A hidden page has no person at it; the debugger's input there is the agent's.
      if (!rose || document.visibilityState !== "visible" || Date.now() - lastHeard < HEARD_MS) return;
      // The browser does not say which kind of press it was; a press it was.
      report("mousedown");
    }, ACTIVATION_POLL_MS);
  }

  // A press on the page indicator (indicator.js) is taken here, first of all, for the same
  // reason: a page's capture listener on window would otherwise stop it before it reached the
  // buttons in the indicator's shadow root. Ours stop there, unseen by the page. After `heard`,
  // which leaves our own elements out.
  function indicatorPress(event) {
    const TW = globalThis.__tabwarden;
    if (event.isTrusted && TW && typeof TW.indicatorEvent === "function" && TW.indicatorEvent(event)) {
      event.stopImmediatePropagation();
    }
  }

  const options = { capture: true, passive: true };
  for (const type of ["pointerdown", "mousedown", "keydown"]) window.addEventListener(type, heard, options);
  for (const type of ["pointerdown", "pointerup", "mousedown", "mouseup", "click", "dblclick", "auxclick", "contextmenu",
    "keydown", "keyup", "keypress", "touchstart", "touchend"]) {
    window.addEventListener(type, indicatorPress, options);
  }
  // A frame (re)loaded: its new document needs arming. Load does not bubble and never reaches
  // the window, but the document sees it while capturing.
  document.addEventListener("load", (event) => {
    const tag = event.target && event.target.tagName;
    if (armed && (tag === "IFRAME" || tag === "FRAME")) tell(TYPES.TAKEOVER_FRAME_LOADED);
  }, options);
  // The worker armed this document at its commit before this file ran (see onCommit in
  // background/load-executor.js).
  if (globalThis.__tabwardenArmAtStart) watch.arm();
})();
