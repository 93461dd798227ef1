// Tabwarden page executor, part 6: is the element ready to be acted on, what did the action
// change, and has the page settled. Checks run in a fixed order (see ensureActionable), so a
// failure always names the first problem; the retryable ones are tried again until a 1.5 s
// budget (capped by the request deadline) runs out.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("actionability")) return;
  TW.parts.add("actionability");
  const CODES = TW.codes;

  const ACTIONABLE_BUDGET_MS = 1500;
  // The floor of the stillness probe: on a shown page two rendered frames are the probe (as in
  // Playwright); a hidden page renders none and animates nothing, so one frame's time will do.
  const STABLE_PROBE_MS = 16;
  const QUIET_MS = 30;
  const MAX_SETTLE_MS = 5000;
  // A navigation that has not taken the page away by then may never (a 204 answer, a download).
  const NAVIGATION_WAIT_MS = 2000;
  // The events of the main-world write patch (background/dialog-patch.js): the page's work in
  // flight (requests and short timers), a frame it asked for, and the probe and its answer. Their
  // names are random and new for every write; the worker sets them here before it sends the
  // write and drops them after its answer (content-relay.js), so only the running write's patch
  // is heard, and a page cannot listen for names it does not know. Without them no patch is
  // heard: the settle wait then waits as it does where none is in place.
  const CHANNEL_NAME = /^[0-9a-f]{32}$/;
  const CHANNELS = ["pending", "frame", "probe", "patched"];
  let channels = null;
  TW.useWriteChannels = (given) => {
    const valid = given && typeof given === "object" && CHANNELS.every((key) => CHANNEL_NAME.test(given[key]));
    channels = valid ? Object.freeze(Object.fromEntries(CHANNELS.map((key) => [key, given[key]]))) : null;
  };
  TW.dropWriteChannels = (given) => {
    // Only the write's own: a later write may have set its names already.
    if (channels && given && CHANNELS.every((key) => channels[key] === given[key])) channels = null;
  };

  // The element whose box decides visibility (an option's box is its select's, an image map
  // area's its image's).
  function boxOwner(el) {
    if (el.localName === "option") return el.closest("select") || el;
    return TW.layoutOwner(el);
  }

  function visibilityProblem(el) {
    const owner = boxOwner(el);
    if (el.localName === "area" && owner === el) return "no image shown uses its map";
    const win = owner.ownerDocument.defaultView;
    const style = win.getComputedStyle(owner);
    if (style.visibility === "hidden" || style.visibility === "collapse") return "it is hidden (visibility)";
    if (typeof owner.checkVisibility === "function" && !owner.checkVisibility({ visibilityProperty: true })) return "it is not rendered";
    const rect = TW.boxOf(el.localName === "area" ? el : owner);
    if (rect.width === 0 || rect.height === 0) return "it has an empty box";
    return "";
  }

  function isRelated(el, hit) {
    if (!hit) return true; // outside the viewport: nothing to say
    if (hit === el || el.contains(hit) || TW.isOverlayNode(hit)) return true;
    // A label (or a control inside one) standing in for its control.
    const label = hit.closest && hit.closest("label");
    if (label && (label.control === el || label.contains(el))) return true;
    if (el.localName === "option" && hit === el.closest("select")) return true;
    // Hit-testing stops at shadow hosts; an element inside a host we point into is ours.
    let node = el;
    while (node) {
      const root = node.getRootNode();
      if (!(root instanceof ShadowRoot)) break;
      if (root.host === hit) return true;
      node = root.host;
    }
    return false;
  }

  function blockerAt(el, x, y) {
    const root = el.getRootNode();
    const finder = root.elementFromPoint ? root : el.ownerDocument;
    const hit = finder.elementFromPoint(x, y);
    return isRelated(el, hit) ? null : hit;
  }

  function occlusion(el) {
    // An area is hit where its shape shows over its image: the browser's hit test gives the
    // area itself there (an earlier area of the map over it, or anything over the image, covers it).
    if (el.localName === "area") {
      const at = TW.areaPoint(el);
      return blockerAt(el, at.x, at.y);
    }
    const owner = boxOwner(el);
    const rect = owner.getBoundingClientRect();
    const centre = blockerAt(owner, rect.left + rect.width / 2, rect.top + rect.height / 2);
    if (!centre) return null;
    const corner = blockerAt(owner, rect.left + Math.min(3, rect.width / 2), rect.top + Math.min(3, rect.height / 2));
    return corner ? centre : null;
  }

  // Two rendered frames (at most `maxMs`): a layout read between frames cannot see an animation
  // move, and a loaded machine may render no frame at all within a short sleep. A hidden page
  // renders none and runs no animations, so it is not waited for.
  function framesRendered(count, maxMs) {
    if (document.visibilityState !== "visible") return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      const step = (left) => requestAnimationFrame(() => (left > 1 ? step(left - 1) : (clearTimeout(timer), resolve())));
      step(count);
    });
  }

  // The probe lasts `ms` and, on a shown page, two rendered frames, side by side (a page just
  // shown may render its first frames before its animations move again).
  async function movedWithin(el, ms, signal) {
    const a = el.getBoundingClientRect();
    await Promise.all([TW.sleep(ms, signal), framesRendered(2, 250)]);
    TW.checkAborted(signal);
    const b = el.getBoundingClientRect();
    return Math.abs(a.left - b.left) > 1 || Math.abs(a.top - b.top) > 1 || Math.abs(a.width - b.width) > 1 || Math.abs(a.height - b.height) > 1;
  }

  const KEYED_RANGES = new Set(["slider", "spinbutton", "scrollbar"]);

  function editProblem(el, kind) {
    if (kind === "type" && !TW.isWritable(el)) {
      const readonly = el.readOnly ? " (it is read-only)" : "";
      // A slider or spin button is set by keys, as its users set it.
      const ranged = KEYED_RANGES.has(TW.roleOf(el)) ? "; set its value with press_key on it (arrows, Home, End, "
        + "PageUp, PageDown)" : "";
      return `the target (${TW.describe(el)}) does not take typed text${readonly}${ranged}`;
    }
    if (kind === "select" && el.localName !== "select") return `the target (${TW.describe(el)}) is not a <select>`;
    return "";
  }

  // Scroll the element into view when it is not fully inside the viewport.
  TW.revealElement = (el) => {
    const owner = boxOwner(el);
    const win = owner.ownerDocument.defaultView;
    const rect = el.localName === "area" ? TW.boxOf(el) : owner.getBoundingClientRect();
    const inside = rect.top >= 0 && rect.left >= 0 && rect.bottom <= win.innerHeight && rect.right <= win.innerWidth;
    if (!inside) owner.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  };

  // A label of `el` a click can go through instead (a covered radio or checkbox of a star widget
  // or a styled switch): shown and not covered itself. Its click acts on `el` and nothing else.
  function clickableLabel(el) {
    for (const label of el.labels || []) {
      if (label.isConnected && !visibilityProblem(label) && !occlusion(label)) return label;
    }
    return null;
  }

  // Throws the first failing check: detached, not_visible, disabled, not_editable, not_stable
  // (click and hover only), occluded. `kind` is click | type | select | hover. Returns the label
  // to click instead when the element is covered and `viaLabel` lets a label stand in (a plain
  // click), else null.
  TW.ensureActionable = async (el, kind, deadlineAt, signal, { viaLabel = false } = {}) => {
    const until = Math.min(Date.now() + ACTIONABLE_BUDGET_MS, deadlineAt);
    for (;;) {
      TW.checkAborted(signal);
      let failure = null;
      if (!el.isConnected) {
        failure = TW.fail(CODES.DETACHED, "the element was removed from the page", "precheck", true);
      } else {
        const hidden = visibilityProblem(el);
        if (hidden) failure = TW.fail(CODES.NOT_VISIBLE, `the element is not visible: ${hidden}`, "precheck", true);
      }
      if (!failure) {
        if (el.closest("[inert]") || TW.ariaOf(el, "aria-disabled") === "true" || el.matches(":disabled")) {
          throw TW.fail(CODES.DISABLED, `the element (${TW.describe(el)}) is disabled`, "precheck", false);
        }
        const edit = editProblem(el, kind);
        if (edit) throw TW.fail(CODES.NOT_EDITABLE, edit, "precheck", false);
        // Stillness matters where input is aimed at the element's place (click, hover); typing
        // and choosing options set the element's value wherever it is.
        const aimed = kind === "click" || kind === "hover";
        if (aimed && await movedWithin(boxOwner(el), STABLE_PROBE_MS, signal)) {
          failure = TW.fail(CODES.NOT_STABLE, "the element is still moving (animation or layout shift)", "precheck", true);
        } else if (kind !== "type" || el.ownerDocument.activeElement !== el) {
          const blocker = occlusion(el);
          const label = blocker && viaLabel ? clickableLabel(el) : null;
          if (label) return label;
          if (blocker) {
            const escalation = viaLabel ? " and it has no label of its own that is clear to click; if the covering element is "
              + "its visible part, click that element, or find the place on a screenshot and use click_xy" : "";
            failure = TW.fail(CODES.OCCLUDED, `another element covers it: ${TW.describe(blocker)}${escalation}`, "precheck", true,
              { blocker: TW.describe(blocker) });
          }
        }
      }
      if (!failure) return null;
      if (Date.now() + 100 > until) throw failure;
      await TW.sleep(100, signal);
    }
  };

  // Watches what an action sets off, from its start: URL changes, DOM mutations (our own overlay
  // excluded), the page's work in flight (requests and short timers, as the write patch counts
  // them) and a navigation to another document. `lastMutation` is the time of the latest of any.
  TW.EffectObserver = class {
    constructor(docs) {
      this.startUrl = location.href;
      this.mutations = 0;
      this.lastMutation = Date.now();
      this.pending = 0; // in flight now
      this.pendingStarted = 0;
      this.navigating = false;
      this.navigationStarted = 0;
      this.observers = [];
      for (const doc of docs) {
        const observer = new MutationObserver((records) => this.absorb(records));
        observer.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
        this.observers.push(observer);
      }
      this.onPending = (event) => {
        const count = Number(event.detail);
        if (!Number.isInteger(count) || count < 0) return;
        if (count > this.pending) this.pendingStarted += count - this.pending;
        this.pending = count;
        this.lastMutation = Date.now();
      };
      // Whether the write patch is in place (it answers the probe at once) and whether the page
      // has asked for an animation frame since the action began.
      this.patched = false;
      this.frameRequested = false;
      this.onFrame = () => { this.frameRequested = true; };
      // The names of the write running now, kept so stop() removes exactly these listeners.
      this.channels = channels;
      if (this.channels) {
        window.addEventListener(this.channels.pending, this.onPending);
        const onPatched = () => { this.patched = true; };
        window.addEventListener(this.channels.patched, onPatched);
        window.dispatchEvent(new CustomEvent(this.channels.probe));
        window.removeEventListener(this.channels.patched, onPatched);
        window.addEventListener(this.channels.frame, this.onFrame);
      }
      // A download or a same-document change does not take the page away; the rest does.
      this.onNavigate = (event) => {
        if (event.downloadRequest == null && !(event.destination && event.destination.sameDocument)) {
          this.navigating = true;
          this.navigationStarted = Date.now();
        }
        this.lastMutation = Date.now();
      };
      if (window.navigation) window.navigation.addEventListener("navigate", this.onNavigate);
    }

    // Whether the action set anything off.
    active() {
      return this.mutations > 0 || this.pendingStarted > 0 || this.navigating || this.urlChanged();
    }

    absorb(records) {
      let counted = 0;
      for (const record of records) {
        if (TW.isOverlayNode(record.target)) continue;
        if (record.type === "childList") {
          const nodes = [...record.addedNodes, ...record.removedNodes];
          if (nodes.length && nodes.every(TW.isOverlayNode)) continue;
        }
        counted += 1;
      }
      if (counted) {
        this.mutations += counted;
        this.lastMutation = Date.now();
      }
    }

    urlChanged() {
      return location.href !== this.startUrl;
    }

    stop() {
      for (const observer of this.observers) {
        this.absorb(observer.takeRecords());
        observer.disconnect();
      }
      if (this.channels) {
        window.removeEventListener(this.channels.pending, this.onPending);
        window.removeEventListener(this.channels.frame, this.onFrame);
      }
      if (window.navigation) window.navigation.removeEventListener("navigate", this.onNavigate);
    }
  };

  // One task of the page's event loop later (a message to ourselves, which a hidden tab does not
  // throttle the way it throttles timers): the input's handlers, their promises and the mutation
  // records they caused have all been delivered by then.
  function nextTask() {
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(0);
    });
  }

  // Wait for what the action set off, not a fixed time: after the page's next task and a frame
  // (for a value set, only when the page asked for one), nothing set off means no wait; DOM
  // changes, until QUIET_MS pass without one; requests and short timers, until they end and
  // QUIET_MS pass; a navigation to another document, until it takes the page away (2 s at most).
  // At most 5 s, never past the deadline. Resolves true when the page went quiet.
  TW.settle = async (observer, deadlineAt, signal, { frameOnlyIfAsked = false } = {}) => {
    const cap = Math.min(Date.now() + MAX_SETTLE_MS, deadlineAt - 200);
    await nextTask();
    // One rendered frame, unless the caller knows the page answers the action in its handlers
    // and the page asked for no frame (a library holding its own reference to
    // requestAnimationFrame is not heard: so clicks always wait for the frame).
    if (!frameOnlyIfAsked || !observer.patched || observer.frameRequested) await framesRendered(1, 50);
    for (;;) {
      TW.checkAborted(signal);
      const leaving = observer.navigating && Date.now() - observer.navigationStarted < NAVIGATION_WAIT_MS;
      const busy = observer.pending > 0 || leaving;
      const quietFor = Date.now() - observer.lastMutation;
      if (!busy && (!observer.active() || quietFor >= QUIET_MS)) return true;
      if (Date.now() >= cap) return false;
      await TW.sleep(Math.max(1, Math.min(busy ? 50 : QUIET_MS - quietFor, cap - Date.now())), signal);
    }
  };
})();
