// Manual takeover in subframes: a person clicking or typing inside an iframe of a driven tab is
// taking over as much as in the page itself, but the top frame's executor never sees those
// events. This watcher (injected into every frame the extension may script, next to the top
// frame's executor) reports them the same way; the top frame has the executor's own watcher.
(() => {
  if (window === window.top) return;
  const KEY = Symbol.for("tabwarden.frameTakeover");
  if (window[KEY]) return;
  try {
    Object.defineProperty(window, KEY, { value: true });
  } catch (_) {
    return;
  }
  const REPORT_GAP_MS = 1000;
  let lastReport = 0;

  function report(event) {
    if (!event.isTrusted) return;
    const now = Date.now();
    if (now - lastReport < REPORT_GAP_MS) return;
    lastReport = now;
    try {
      chrome.runtime.sendMessage({ type: "tabwarden.manualInput", kind: event.type, url: location.href.slice(0, 2000),
                                   duringAgentRequest: false }).catch(() => {});
    } catch (_) {
      // the extension was reloaded: nobody to tell
    }
  }

  window.addEventListener("mousedown", report, { capture: true, passive: true });
  window.addEventListener("keydown", report, { capture: true, passive: true });
  // A frame (re)loaded: its new document needs the watcher. Load does not bubble and never reaches
  // the window, but the document sees it while capturing.
  document.addEventListener("load", (event) => {
    const tag = event.target && event.target.tagName;
    if (tag !== "IFRAME" && tag !== "FRAME") return;
    try {
      chrome.runtime.sendMessage({ type: "tabwarden.frameLoaded" }).catch(() => {});
    } catch (_) {
      // the extension was reloaded
    }
  }, { capture: true, passive: true });
})();
