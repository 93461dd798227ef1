// Tabwarden page executor, part 8: the write pipeline. Resolve the ref, reveal it, check it is
// actionable, dispatch synthetic input, let the page settle, verify what can be verified,
// collect the evidence, and take the post-write snapshot the host diffs against the last one.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("actions")) return;
  TW.parts.add("actions");
  const CODES = TW.codes;

  const POST_WRITE_TOKENS = 1500;
  const BETWEEN_ACTIONS_MS = 300;
  const SYNTHETIC_KEY_WARNING =
    "Note: synthetic key events (untrusted); pages that need trusted keys may ignore them. Trusted keys come with the debugger (L2) tools.";

  function label(target) {
    const { role, name } = target.hint;
    return `${role}${name ? ` ${TW.quote(name)}` : ""} [ref=${target.ref}]`;
  }

  function recoveryNote(target) {
    return target.recoveredFrom ? ` (target recovered from ${target.recoveredFrom} to ${target.ref})` : "";
  }

  function observedDocs(target) {
    const docs = [document];
    for (const { doc } of target.frames) docs.push(doc);
    return docs;
  }

  function stateOf(el) {
    return JSON.stringify([
      el.checked, el.value, el.open, el.selectedIndex,
      TW.ariaOf(el, "aria-expanded"), TW.ariaOf(el, "aria-pressed"), TW.ariaOf(el, "aria-selected"), TW.ariaOf(el, "aria-checked"),
      TW.ariaOf(el, "aria-current"),
    ]);
  }

  const DIALOGS = "dialog, [role=dialog], [role=alertdialog]";

  // The dialogs shown in the element's document (a modal or not), to tell one a click opened
  // or closed.
  function shownDialogs(doc) {
    const win = doc.defaultView;
    return [...doc.querySelectorAll(DIALOGS)].filter((d) => (d.localName !== "dialog" || d.open)
      && !TW.isHidden(d, win.getComputedStyle(d)) && d.getClientRects().length > 0);
  }

  // What a click's target shows it did, once the page settled: its own state or label changed,
  // a dialog opened, or the dialog it was in closed. "" when none of these.
  function clickTook(watch) {
    const el = watch.el;
    if (el.isConnected && stateOf(el) !== watch.before) {
      const now = TW.attributesOf(el, TW.roleOf(el)).map((attr) => `[${attr}]`).join(" ");
      // A menu item that closes its menu is checked out of sight: the snapshot no longer shows it.
      const gone = el.getClientRects().length === 0 ? " (it is no longer shown)" : "";
      return ["target_state_changed", `Verified: the target's own state changed${now ? `; it now reads ${now}` : ""}${gone}.`];
    }
    const name = el.isConnected ? TW.roleAndName(el, TW.roleOf(el)).name : "";
    if (name && watch.name && name !== watch.name) {
      return ["target_state_changed", `Verified: the target's own label changed; it now reads ${TW.quote(name)}.`];
    }
    const now = shownDialogs(el.ownerDocument);
    const opened = now.find((d) => !watch.dialogs.includes(d));
    if (opened) {
      const label = TW.roleAndName(opened, TW.roleOf(opened)).name;
      return ["dialog_opened", `Verified: a dialog opened${label ? ` (${TW.quote(label)})` : ""}.`];
    }
    const closed = watch.dialogs.find((d) => d.contains(el) && !now.includes(d));
    if (closed) return ["dialog_closed", "Verified: the dialog it was in closed."];
    return null;
  }

  function highlight(target) {
    try {
      TW.highlight(TW.topLevelRect(target.el, target.frames));
    } catch (_) {
      // unsupported frame geometry: act without the highlight
    }
  }

  function newAttemptId() {
    return Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  const NOTICES = {
    verified: "Verified: the target holds the requested state.",
    observed: "Change observed; the intended effect cannot be confirmed.",
    dispatched: "Dispatched, but no confirmable effect was observed.",
  };

  // Everything after dispatch: settle, gather effects, snapshot, build the result. `valueSet`:
  // the action set a field's value (type, select), which pages answer in their handlers; a
  // rendered frame is then waited for only when the page asked for one.
  // `watch`: {el, before} of a click's target, whose own state changing (expanded, checked,
  // selected, pressed) once the page settled shows the click took.
  async function finish(run, { actionText, effectState, effects, warnings = [], opens = null, valueSet = false, watch = null }) {
    const stable = await TW.settle(run.observer, run.deadlineAt, run.signal, { frameOnlyIfAsked: valueSet });
    run.observer.stop();
    if (run.observer.urlChanged()) effects.push("url_changed");
    if (run.observer.mutations > 0) effects.push("dom_mutated");
    let notice = null;
    const took = watch && effectState !== "verified" ? clickTook(watch) : null;
    if (took) {
      effects.push(took[0]);
      effectState = "verified";
      notice = took[1];
    }
    if (effectState !== "verified" && effects.length) effectState = "observed";
    const snap = TW.takeSnapshot({ maxTokens: POST_WRITE_TOKENS, keepNew: true });
    const lines = [actionText, notice || NOTICES[effectState], ...warnings];
    return {
      resultText: lines.join("\n"),
      snapshot: TW.snapshotForHost(snap),
      pageStabilized: stable,
      opensTabs: opens ? [opens] : [],
      evidence: {
        attemptId: newAttemptId(),
        generationBefore: run.generationBefore,
        generationAfter: snap.id,
        attempts: [{ phase: "execute", strategy: "l1", ok: true }],
        effectState,
        observedEffects: [...new Set(effects)],
        outcome: effectState === "verified" ? "verified" : "uncertain",
      },
    };
  }

  // A plain left click on a covered input may go through the input's own label.
  const plainClick = (params) => !params.doubleClick && (params.button || "left") === "left";

  // Resolve, reveal and check one target, keeping what the host expects of it (`expect`) and,
  // for a covered input, the label its click goes through (`via`).
  async function prepare(run, ref, kind, allowRecovery, expect, viaLabel = false) {
    const target = TW.resolveRef(ref, { allowRecovery });
    target.expect = expect;
    TW.revealElement(target.el);
    target.via = await TW.ensureActionable(target.el, kind, run.deadlineAt, run.signal, { viaLabel });
    TW.checkAborted(run.signal);
    highlight(target);
    return target;
  }

  // The last step before the input: the target must still be what the host expects (else
  // target_changed, nothing sent); from here on the write may have taken effect.
  function dispatching(run, target) {
    TW.confirmTarget(target, target.expect);
    run.request.dispatched = true;
  }

  function begin(request) {
    return {
      deadlineAt: request.deadlineAt,
      signal: request.signal,
      generationBefore: TW.state.snapshot ? TW.state.snapshot.id : null,
      observer: new TW.EffectObserver([document]),
      request,
    };
  }

  function watchFrames(run, target) {
    const extra = observedDocs(target).slice(1);
    if (extra.length) {
      const inner = new TW.EffectObserver(extra);
      const outer = run.observer;
      run.observer = {
        get mutations() { return outer.mutations + inner.mutations; },
        get lastMutation() { return Math.max(outer.lastMutation, inner.lastMutation); },
        get pending() { return outer.pending; },
        get navigating() { return outer.navigating; },
        get navigationStarted() { return outer.navigationStarted; },
        active: () => outer.active() || inner.mutations > 0,
        urlChanged: () => outer.urlChanged(),
        stop: () => { outer.stop(); inner.stop(); },
      };
    }
  }

  // ---- single actions

  async function dispatchClick(run, target, params) {
    const el = target.el;
    const doc = el.ownerDocument;
    const before = stateOf(el);
    const name = TW.roleAndName(el, TW.roleOf(el)).name;
    const dialogs = shownDialogs(doc);
    const focusBefore = doc.activeElement;
    dispatching(run, target);
    TW.input.click(target.via || el, params);
    const effects = [];
    if (el.isConnected && stateOf(el) !== before) effects.push("target_state_changed");
    if (doc.activeElement !== focusBefore) effects.push("focus_changed");
    const how = params.doubleClick ? "Double-clicked" : params.button === "right" ? "Right-clicked" : "Clicked";
    const opens = newContextUrl(el);
    const through = target.via ? ` through its label "${TW.clip(TW.collapse(target.via.textContent), 60)}" (another element covers it)` : "";
    return { actionText: `${how} ${label(target)}${through}${recoveryNote(target)}`, effectState: "dispatched", effects, opens,
      watch: { el, before, name, dialogs } };
  }

  // The URL a click on `el` loads in another tab or window (a link with a target), if any: the
  // host looks for that tab afterwards.
  function newContextUrl(el) {
    const link = el.closest("a[href], area[href]");
    if (!link) return null;
    const target = (link.getAttribute("target") || "").trim();
    if (!target || /^_(self|parent|top)$/i.test(target)) return null;
    return link.href;
  }

  // A field that suggests as it is typed in (a combobox, aria-autocomplete) filters on key
  // events: setting its value at once would leave its list closed. Short text only: key by key
  // takes a round trip a key, and a long text would outlast the write's deadline.
  const SUGGEST_KEYED_CHARS = 64;
  function suggests(el, text) {
    const autocomplete = (TW.ariaOf(el, "aria-autocomplete") || "none").trim().toLowerCase();
    return text.length <= SUGGEST_KEYED_CHARS && (TW.roleOf(el) === "combobox" || autocomplete !== "none" && autocomplete !== "");
  }

  async function dispatchType(run, target, params) {
    const el = target.el;
    const secret = TW.isCredentialField(el);
    const before = TW.input.currentText(el);
    const slowly = !!params.slowly || suggests(el, params.text);
    dispatching(run, target);
    const expected = await TW.input.type(el, params.text, { mode: params.mode, slowly, signal: run.signal });
    const editable = el.localName !== "input" && el.localName !== "textarea";
    const holds = () => (editable ? TW.collapse(el.textContent).includes(TW.collapse(params.text)) : el.value === expected);
    if (!slowly && !holds()) {
      throw TW.fail(CODES.L1_NOT_EFFECTIVE, "the typed value did not stick (the page rejected synthetic input)", "verify", false,
        { escalationTool: "type_trusted", dispatched: true, effectMayHaveOccurred: true });
    }
    const what = secret ? `${params.text.length} characters (hidden)` : TW.quote(TW.clip(params.text, 80));
    let actionText = `Typed ${what} into ${label(target)}${recoveryNote(target)}`;
    let submitted = false;
    if (params.submit) {
      submitted = TW.input.submit(el);
      actionText += submitted ? " and submitted the form" : " and pressed Enter";
    }
    if (slowly && !params.slowly) actionText += " key by key (it suggests as it is typed in)";
    // Typed key by key, the page saw every key even when the text ends as it was.
    return { actionText, expected, holds, unchanged: before === expected && !slowly, submitted, effects: ["value_set"] };
  }

  const sameSelection = (a, b) => JSON.stringify([...new Set(a)].sort()) === JSON.stringify([...new Set(b)].sort());

  function shownSelection(el) {
    const picked = [...el.options].filter((o) => o.selected);
    return picked.length ? picked.map((o) => `${TW.quote(TW.collapse(o.textContent))} (value ${TW.quote(o.value)})`).join(", ") : "nothing";
  }

  // The select must hold exactly the requested values: a change handler may put the old value
  // back, or refuse the new one, during the dispatch or later while the page settles.
  function requireSelection(el, requested, when) {
    const holds = TW.input.selectedValues(el);
    if (sameSelection(holds, requested)) return;
    throw TW.fail(CODES.L1_NOT_EFFECTIVE,
      `the page did not keep the selection ${when}: asked for ${requested.map(TW.quote).join(", ")}, the select holds ` +
        `${shownSelection(el)} (a page handler reverted or refused it)`,
      "verify", false, { requested, holds, dispatched: true, effectMayHaveOccurred: true });
  }

  async function dispatchSelect(run, target, params) {
    const el = target.el;
    const before = TW.input.selectedValues(el);
    dispatching(run, target);
    const chosen = TW.input.select(el, params.values);
    requireSelection(el, chosen.values, "after its change events");
    return {
      actionText: `Selected ${chosen.labels.map(TW.quote).join(", ")} in ${label(target)}${recoveryNote(target)}`,
      requested: chosen.values,
      // Judged before acting: what the handlers did afterwards says nothing about it.
      already: sameSelection(before, chosen.values),
    };
  }

  TW.actions = {};

  TW.actions.click = async (params, request) => {
    const run = begin(request);
    try {
      const target = await prepare(run, params.ref, "click", !!params.allowRecovery, params.expect, plainClick(params));
      watchFrames(run, target);
      return await finish(run, await dispatchClick(run, target, params));
    } finally {
      run.observer.stop();
    }
  };

  TW.actions.hover = async (params, request) => {
    const run = begin(request);
    try {
      const target = await prepare(run, params.ref, "hover", false, params.expect);
      watchFrames(run, target);
      dispatching(run, target);
      TW.input.hover(target.el);
      return await finish(run, { actionText: `Hovered over ${label(target)}`, effectState: "dispatched", effects: [] });
    } finally {
      run.observer.stop();
    }
  };

  TW.actions.type = async (params, request) => {
    const run = begin(request);
    try {
      const target = await prepare(run, params.ref, "type", !!params.allowRecovery, params.expect);
      watchFrames(run, target);
      const typed = await dispatchType(run, target, params);
      let effectState = "verified";
      let actionText = typed.actionText;
      if (typed.unchanged && !typed.submitted) {
        effectState = "dispatched";
        actionText += " (the field already held that text)";
      }
      const result = await finish(run, { actionText, effectState, effects: typed.effects, valueSet: true });
      // A submitted form may clear its fields; only an unsubmitted change must be kept.
      if (effectState === "verified" && !typed.submitted && target.el.isConnected && !typed.holds()) {
        throw TW.fail(CODES.L1_NOT_EFFECTIVE, "target state was not kept: the page reverted the typed value", "verify", false,
          { escalationTool: "type_trusted", dispatched: true, effectMayHaveOccurred: true });
      }
      if (typed.submitted) result.evidence.outcome = "uncertain";
      return result;
    } finally {
      run.observer.stop();
    }
  };

  TW.actions.select_option = async (params, request) => {
    const run = begin(request);
    try {
      const target = await prepare(run, params.ref, "select", !!params.allowRecovery, params.expect);
      watchFrames(run, target);
      const picked = await dispatchSelect(run, target, params);
      let effectState = "verified";
      let actionText = picked.actionText;
      if (picked.already) {
        effectState = "dispatched";
        actionText += " (already selected)";
      }
      const result = await finish(run, { actionText, effectState, effects: ["selection_set"], valueSet: true });
      if (target.el.isConnected) requireSelection(target.el, picked.requested, "once the page settled");
      return result;
    } finally {
      run.observer.stop();
    }
  };

  TW.actions.press_key = async (params, request) => {
    const run = begin(request);
    try {
      const parsed = TW.input.parseKey(params.key);
      let el;
      let where;
      let target = null;
      if (params.ref) {
        target = TW.resolveRef(params.ref);
        TW.revealElement(target.el);
        watchFrames(run, target);
        el = target.el;
        TW.confirmTarget(target, params.expect); // before the focus, which the page may act on
        if (typeof el.focus === "function") el.focus({ preventScroll: true });
        highlight(target);
        where = label(target);
      } else {
        el = document.activeElement || document.body;
        where = el === document.body ? "the page" : `the focused element (${TW.describe(el)})`;
      }
      TW.checkAborted(run.signal);
      const focusBefore = document.activeElement;
      if (target) TW.confirmTarget(target, params.expect);
      request.dispatched = true;
      const times = params.repeat || 1;
      let emulated = TW.input.pressKey(el, parsed);
      // Each further press goes where the focus is then, as a keyboard's does.
      for (let i = 1; i < times; i++) {
        TW.checkAborted(run.signal);
        emulated = TW.input.pressKey(document.activeElement || document.body, parsed) || emulated;
      }
      const effects = document.activeElement !== focusBefore ? ["focus_changed"] : [];
      const actionText = `Pressed ${params.key}${times > 1 ? ` ${times} times` : ""} on ${where}${emulated ? `; emulated the default action: ${emulated}` : ""}`;
      return await finish(run, { actionText, effectState: "dispatched", effects, warnings: [SYNTHETIC_KEY_WARNING] });
    } finally {
      run.observer.stop();
    }
  };

  // ---- batch

  // True when acting on `el` may load another page or open a tab: the remaining refs would
  // then point at a page that is gone, so the batch stops after it.
  function opensBrowsingContext(action, el) {
    if (action.action === "type") return !!action.submit;
    if (action.action !== "click") return false;
    const link = el.closest("a[href], area[href]");
    if (link) {
      const href = link.getAttribute("href") || "";
      return !(href.startsWith("#") || /^javascript:/i.test(href.trim()));
    }
    const submitter = el.closest("button, input[type=submit], input[type=image]");
    if (submitter && submitter.form && (submitter.type === "submit" || submitter.type === "image")) return true;
    return false;
  }

  TW.actions.batch_actions = async (params, request) => {
    const run = begin(request);
    const baseCount = TW.state.snapshot ? TW.state.snapshot.refs.size : TW.countRefs();
    const threshold = Math.max(3, Math.floor(baseCount * 0.2));
    const steps = [];
    const opens = [];
    let stopped = "";
    try {
      for (const [index, action] of params.actions.entries()) {
        if (index > 0) await TW.sleep(BETWEEN_ACTIONS_MS, run.signal);
        let step;
        try {
          const kind = action.action === "select_option" ? "select" : action.action;
          const target = await prepare(run, action.ref, kind, false, action.expect, kind === "click" && plainClick(action));
          if (action.action === "click") {
            step = await dispatchClick(run, target, action);
            if (step.opens) opens.push(step.opens);
          }
          else if (action.action === "type") step = await dispatchType(run, target, action);
          else step = await dispatchSelect(run, target, action);
          steps.push({ index, action: action.action, ref: target.ref, ok: true, text: step.actionText });
          if (opensBrowsingContext(action, target.el)) stopped = "the last action may load a new page or open a tab";
        } catch (err) {
          if (err instanceof TW.ActionFailure) {
            err.details = {
              ...(err.details || {}),
              completed: steps,
              failedIndex: index,
              notRun: params.actions.length - index - 1,
              dispatched: !!request.dispatched,
              effectMayHaveOccurred: !!request.dispatched,
            };
            err.message = `action ${index + 1} (${action.action} ${action.ref}) failed: ${err.message}; ${steps.length} earlier action(s) ran, the remaining ${params.actions.length - index - 1} were not run`;
          }
          throw err;
        }
        const remaining = params.actions.length - index - 1;
        if (!remaining) break;
        if (!stopped && run.observer.urlChanged()) stopped = "the page address changed";
        if (!stopped) {
          const count = TW.countRefs();
          if (Math.abs(count - baseCount) > threshold) stopped = `the page changed a lot (${baseCount} refs before, ${count} now)`;
        }
        if (stopped) {
          stopped = `Stopped after action ${index + 1}: ${stopped}; the remaining ${remaining} action(s) were not run.`;
          break;
        }
      }
      const actionText = ["Batch:", ...steps.map((s) => `${s.index + 1}. ${s.text}`), ...(stopped ? [stopped] : [])].join("\n");
      const result = await finish(run, { actionText, effectState: "dispatched", effects: [] });
      result.steps = steps;
      result.opensTabs = opens;
      return result;
    } finally {
      run.observer.stop();
    }
  };
})();
