// Tabwarden page executor, part 4: turning a ref back into an element. Resolution is strict:
// the ref must belong to the current snapshot of this document and every frame on its way must
// still hold the document it held then. One recovery is allowed where the host sends
// `allowRecovery` (tools declared with ref recovery): same document, identical hint, identical
// frame chain, exactly one candidate. A write acts only on an element that still has the role
// and name the host sent as `expect` (what it judged and the approval card showed).
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("refs")) return;
  TW.parts.add("refs");
  const CODES = TW.codes;

  const REF_SHAPE = /^s([0-9a-z]+)_(\d+)_(\d+)$/;

  function framesIntact(frames) {
    let owner = document;
    for (const { frame, doc } of frames) {
      if (!frame.isConnected || frame.ownerDocument !== owner) return false;
      let current = null;
      try {
        current = frame.contentDocument;
      } catch (_) {
        return false;
      }
      if (current !== doc || !doc.defaultView || !TW.sameOriginAsTop(doc)) return false;
      owner = doc;
    }
    return owner;
  }

  // Why an entry no longer resolves, or "" when it still does.
  function brokenBecause(entry) {
    if (!entry.el.isConnected) return "the element was removed from the page";
    const innermost = framesIntact(entry.frames);
    if (!innermost) return "its frame was replaced or removed";
    if (entry.el.ownerDocument !== innermost) return "the element moved to another document";
    return "";
  }

  function strict(ref) {
    if (typeof ref !== "string" || !REF_SHAPE.test(ref)) throw TW.staleRef(ref, "not a ref of this page");
    const snap = TW.state.snapshot;
    if (!snap) throw TW.staleRef(ref, "no snapshot has been taken in this page yet");
    if (!ref.startsWith(`s${snap.token}_`)) throw TW.staleRef(ref, "it belongs to another document");
    // A ref of an older snapshot stays only where the current one kept it (an unchanged element
    // after the host's own read).
    const entry = snap.refs.get(ref);
    if (!entry) {
      throw TW.staleRef(ref, ref.startsWith(`${snap.id}_`) ? "no such ref in the current snapshot" : "it belongs to an older snapshot");
    }
    const why = brokenBecause(entry);
    if (why) throw TW.staleRef(ref, why);
    return { ref, ...entry };
  }

  function sameChain(a, b) {
    if (a.length !== b.length) return false;
    return a.every((link, i) => link.frame === b[i].frame && link.doc === b[i].doc);
  }

  function recover(ref, original) {
    const snap = TW.state.snapshot;
    if (!snap || !ref.startsWith(`s${snap.token}_`)) throw original;
    const prior = TW.state.priorHints.get(ref);
    if (!prior) throw original;
    let hintMatches = 0;
    const candidates = [];
    for (const [candidate, entry] of snap.refs) {
      if (!TW.sameHint(entry.hint, prior.hint)) continue;
      hintMatches += 1;
      if (prior.token === snap.token && entry.doc === prior.doc && sameChain(entry.frames, prior.frames)) {
        candidates.push(candidate);
      }
    }
    // Matches only in another frame document: the frame was replaced; that is never recovered.
    if (hintMatches > 0 && candidates.length === 0) throw original;
    if (candidates.length !== 1) {
      throw TW.fail(
        CODES.AMBIGUOUS_TARGET,
        `ref ${ref} is stale and cannot be recovered uniquely (${candidates.length} candidates); call read_page again`,
        "recover",
        false,
        { candidates: candidates.length },
      );
    }
    const resolved = strict(candidates[0]);
    resolved.recoveredFrom = ref;
    return resolved;
  }

  // Resolve `ref` to { ref, el, frames, doc, hint, recoveredFrom? }; throws stale_ref or
  // ambiguous_target.
  TW.resolveRef = (ref, { allowRecovery = false } = {}) => {
    try {
      return strict(ref);
    } catch (err) {
      if (!allowRecovery || !(err instanceof TW.ActionFailure) || err.code !== CODES.STALE_REF || typeof ref !== "string" || !REF_SHAPE.test(ref)) {
        throw err;
      }
      return recover(ref, err);
    }
  };

  const shown = ({ role, name }) => (name ? `${role} ${TW.quote(name)}` : role);

  // A destination as the gatekeeper judged it: method, whole URL (rules may name paths) and
  // whether it opens a new tab.
  const leadKey = (lead) =>
    lead ? `${String(lead.method || "GET").toUpperCase()} ${lead.url}${lead.newTab ? " (new tab)" : ""}` : "";

  const confirmLeads = (target, expected) => {
    const now = TW.destinationOf(target.el);
    if (leadKey(now) === leadKey(expected)) return;
    throw TW.fail(
      CODES.TARGET_CHANGED,
      `ref ${target.ref} leads elsewhere since the page was read: it led to ${expected ? TW.quote(leadKey(expected)) : "nowhere"}, ` +
        `it now leads to ${now ? TW.quote(leadKey(now)) : "nowhere"}; nothing was done. Call read_page again and decide anew`,
      "precheck",
      false,
      { dispatched: false, expectedLeads: expected, foundLeads: now },
    );
  };

  // Throws target_changed (nothing dispatched) unless the target still has the role and
  // accessible name the host expects, and still leads where the host judged it would: a page
  // that renamed, repurposed or re-pointed the element after the call was judged (or the user
  // approved it) gets no input. Called right before the input, in
  // the same task, so no page script runs in between.
  TW.confirmTarget = (target, expect) => {
    if (!expect || typeof expect.role !== "string" || typeof expect.name !== "string") {
      throw TW.fail(CODES.INVALID_PARAMS, `no expected element came with ref ${target.ref}; nothing was done`, "precheck", false,
        { dispatched: false });
    }
    const now = TW.roleAndName(target.el);
    if (now.role === expect.role && now.name === expect.name) {
      confirmLeads(target, expect.leads || null);
      return;
    }
    throw TW.fail(
      CODES.TARGET_CHANGED,
      `ref ${target.ref} changed since the page was read: it was ${shown(expect)}, it is now ${shown(now)}; nothing was done. ` +
        "Call read_page again and decide anew",
      "precheck",
      false,
      { dispatched: false, expected: { role: expect.role, name: expect.name }, found: now },
    );
  };

  // For the debugger bridge (L2): the element of a ref of the current snapshot, resolved
  // strictly. The host evaluates this in our isolated world and describes the element to get
  // its backendNodeId, so L1 and L2 agree on the target without guessing.
  TW.elementForRef = (ref) => strict(ref).el;

  // The element's rect in the top-level viewport (an image map area's: its shape's bounds).
  // Frames with padding or any transform other than a translation cannot be converted safely:
  // unsupported_frame.
  TW.topLevelRect = (el, frames) => {
    const rect = TW.boxOf(el);
    let x = rect.left;
    let y = rect.top;
    for (let i = frames.length - 1; i >= 0; i--) {
      const frame = frames[i].frame;
      const win = frame.ownerDocument.defaultView;
      const style = win.getComputedStyle(frame);
      const padded = ["paddingTop", "paddingLeft", "paddingRight", "paddingBottom"].some((side) => Number.parseFloat(style[side]) > 0);
      if (padded || (style.transform && style.transform !== "none" && !/^matrix\(1, 0, 0, 1, /.test(style.transform))) {
        throw TW.fail(CODES.UNSUPPORTED_FRAME, "the element sits in a frame with padding or a transform; use read_page_deep", "precheck", false);
      }
      const box = frame.getBoundingClientRect();
      x += box.left + frame.clientLeft;
      y += box.top + frame.clientTop;
    }
    return { x, y, width: Math.max(0, rect.width), height: Math.max(0, rect.height) };
  };
})();
