// The shown thread as data: items built from the host's snapshot, then kept current by the live
// events. No DOM here. `apply(event)` returns "gap" when the stream cursor says events were
// missed (the page then asks for a fresh snapshot) and the id of the changed item otherwise.

const ACTIVE = new Set(["preparing", "streaming_model", "waiting_approval", "waiting_interaction", "executing_tool"]);

export class ThreadModel {
  constructor() {
    this.reset(null);
  }

  reset(threadId) {
    this.threadId = threadId;
    this.meta = null;
    this.items = []; // in order
    this.byId = new Map();
    this.unshown = new Set(); // ids of live items of kinds this view does not draw
    this.approvals = new Map(); // approvalId -> pending approval (this thread)
    this.interactions = new Map();
    this.recovery = null; // a paused_uncertain run
    this.budgetPause = null; // a paused_budget run
    this.running = false;
    this.turnId = null;
    this.queue = [];
    this.consent = []; // what the task may commit without a question (from the user's own words)
    this.usage = { input: 0, output: 0 };
    this.cursor = null;
  }

  // -- snapshot ----------------------------------------------------------------------------------

  load(snapshot) {
    this.reset(snapshot.meta.id);
    this.meta = snapshot.meta;
    for (const node of snapshot.nodes || []) this.addNode(node);
    for (const approval of snapshot.pendingApprovals || []) {
      this.approvals.set(approval.approvalId, approval);
      this.markWaiting(approval.itemId);
    }
    for (const asked of snapshot.pendingInteractions || []) {
      this.interactions.set(asked.interactionId, asked);
      this.markWaiting(asked.itemId);
    }
    const run = snapshot.activeRun;
    if (run) {
      this.running = ACTIVE.has(run.state);
      this.turnId = run.turnId || null;
      if (run.state === "paused_uncertain") this.setRecovery(run);
      if (run.state === "paused_budget") this.budgetPause = run;
    }
    this.queue = snapshot.queue || [];
    this.consent = snapshot.consent || [];
    this.cursor = snapshot.cursor ? { ...snapshot.cursor, fromSnapshot: true } : null;
  }

  addNode(node) {
    const body = node.body || {};
    switch (node.kind) {
      case "user_message":
        this.put({ id: node.id, kind: "user", text: body.text || "" });
        break;
      case "assistant_message":
        this.put({ id: node.id, kind: "assistant", text: body.text || "", reasoning: body.reasoning || "", done: true });
        if (body.usage) this.addUsage(body.usage);
        break;
      case "tool_call":
        this.put({ id: node.id, kind: "tool", tool: body.tool, label: body.label || body.tool, level: body.level,
          params: body.params || {}, callId: body.callId, status: "running" });
        break;
      case "tool_result": {
        const call = this.byId.get(node.id.replace(/:result$/, ""))
          || this.items.find((i) => i.kind === "tool" && i.callId === body.callId);
        if (call) Object.assign(call, { status: statusOf(body), result: { ok: body.ok, text: body.text, code: body.code } });
        break;
      }
      case "approval_decision": {
        const call = this.byId.get(body.itemId);
        if (call) call.decision = { kind: body.decision && body.decision.kind, note: body.decision && body.decision.note, by: body.by };
        break;
      }
      case "system_notice":
        this.put({ id: node.id, kind: "notice", noticeKind: body.noticeKind, text: body.text || "" });
        break;
      default:
        break; // turn context and future kinds are not shown
    }
  }

  put(item) {
    const existing = this.byId.get(item.id);
    if (existing) {
      Object.assign(existing, item);
      return existing;
    }
    this.items.push(item);
    this.byId.set(item.id, item);
    return item;
  }

  addUsage(usage) {
    this.usage.input += usage.input || 0;
    this.usage.output += usage.output || 0;
  }

  // -- live events -------------------------------------------------------------------------------

  apply(event) {
    if (event.stream) {
      const { epoch, sequence } = event.stream;
      if (this.cursor) {
        if (epoch !== this.cursor.epoch) return "gap"; // another host process: take a new snapshot
        // A snapshot taken before the thread's first event of this epoch also says sequence 1.
        const first = this.cursor.fromSnapshot && this.cursor.sequence === 1 && sequence === 1;
        if (!first && sequence <= this.cursor.sequence) return null; // already seen
        if (!first && sequence > this.cursor.sequence + 1) return "gap";
      }
      this.cursor = { epoch, sequence };
    }
    switch (event.type) {
      case "turn.start":
        this.running = true;
        this.turnId = event.turnId;
        this.recovery = null;
        this.budgetPause = null;
        return "state";
      case "turn.complete":
        this.running = false;
        this.turnId = null;
        // A call the user stopped the task from already says so on its card: one line is enough.
        if (event.stopReason === "interrupted" && this.endsWithCancelledCall()) return "state";
        if (["interrupted", "error", "budget_pause", "max_tokens", "refusal"].includes(event.stopReason)) {
          this.put({ id: `end:${event.turnId}`, kind: "notice", noticeKind: `stop:${event.stopReason}`, text: "" });
          return `end:${event.turnId}`;
        }
        return "state";
      case "item.start":
        return this.itemStart(event);
      case "item.delta":
        return this.itemDelta(event);
      case "item.complete":
        return this.itemComplete(event);
      case "token.usage":
        this.addUsage(event.usage || {});
        return "state";
      case "approval.request":
        this.approvals.set(event.approvalId, event);
        this.markWaiting(event.itemId);
        return "approvals";
      case "approval.resolved": {
        const approval = this.approvals.get(event.approvalId);
        this.approvals.delete(event.approvalId);
        if (approval) {
          const call = this.byId.get(approval.itemId);
          if (call) {
            call.decision = { kind: event.decision, by: event.by, note: call.decision && call.decision.note };
            if (call.status === "waiting") call.status = "running"; // until its result arrives
          }
        }
        return "approvals";
      }
      case "interaction.request":
        this.interactions.set(event.interactionId, event);
        this.markWaiting(event.itemId);
        return "approvals";
      case "interaction.resolved": {
        const asked = this.interactions.get(event.interactionId);
        this.interactions.delete(event.interactionId);
        const call = asked && this.byId.get(asked.itemId);
        if (call && call.status === "waiting") call.status = "running";
        return "approvals";
      }
      case "run.recovery_required":
        this.setRecovery({ ...event.run, message: event.message });
        return "approvals";
      case "queue.updated":
        this.queue = event.pending || [];
        return "state";
      case "consent.updated":
        this.consent = event.items || [];
        return "state";
      case "thread.updated":
        this.meta = { ...this.meta, ...event.patch, revision: event.revision };
        return "state";
      case "alert.raised":
        this.put({ id: `alert:${event.stream ? event.stream.sequence : Date.now()}`, kind: "notice", noticeKind: "alert",
          text: event.message });
        return "items";
      case "error":
        this.put({ id: `error:${event.stream ? event.stream.sequence : Date.now()}`, kind: "error", code: event.code,
          message: event.message, errorKind: event.errorKind });
        return "items";
      default:
        return null;
    }
  }

  endsWithCancelledCall() {
    const last = this.items[this.items.length - 1];
    return Boolean(last && last.kind === "tool" && last.decision && last.decision.kind === "cancel");
  }

  setRecovery(run) {
    this.recovery = run;
    const callId = run.pendingTool && run.pendingTool.callId;
    const call = callId && this.items.find((i) => i.kind === "tool" && i.callId === callId);
    if (call && !call.result) call.status = "waiting";
  }

  // The thread's activity (sent to every page, without a stream cursor): a run that left a
  // pause is no longer waiting for the recovery or budget card.
  activity(activity) {
    const state = activity.state || null;
    if (this.recovery && state !== "paused_uncertain") this.recovery = null;
    if (this.budgetPause && state !== "paused_budget") this.budgetPause = null;
  }

  itemStart(event) {
    const meta = event.meta || {};
    if (event.kind === "user_message") this.put({ id: event.itemId, kind: "user", text: "" });
    else if (event.kind === "assistant_message") this.put({ id: event.itemId, kind: "assistant", text: "", reasoning: "", done: false });
    else if (event.kind === "tool_call") {
      this.put({ id: event.itemId, kind: "tool", tool: meta.toolName, label: meta.label || meta.toolName, level: meta.level,
        summary: meta.paramsSummary, status: "running" });
    } else if (event.kind === "system_notice") this.put({ id: event.itemId, kind: "notice", noticeKind: meta.noticeKind, text: "" });
    else {
      this.unshown.add(event.itemId); // a kind this view does not draw
      return null;
    }
    return event.itemId;
  }

  itemDelta(event) {
    if (this.unshown.has(event.itemId)) return null;
    // An item that started before this view's snapshot: show what comes, complete it from the host.
    const item = this.byId.get(event.itemId)
      || this.put({ id: event.itemId, kind: "assistant", text: "", reasoning: "", done: false, partial: true });
    const delta = event.delta || {};
    if (delta.text) item.text = (item.text || "") + delta.text;
    if (delta.reasoning) item.reasoning = (item.reasoning || "") + delta.reasoning;
    if (delta.toolProgress) item.progress = delta.toolProgress;
    return item.id;
  }

  itemComplete(event) {
    if (this.unshown.has(event.itemId)) return null;
    const item = this.byId.get(event.itemId);
    if (!item || item.partial) return "gap"; // its beginning was missed: the stored item is complete now
    item.done = true;
    item.progress = null;
    if (item.kind === "tool" && event.result) {
      item.result = event.result;
      item.status = statusOf(event.result);
    }
    return item.id;
  }

  markWaiting(itemId) {
    const call = this.byId.get(itemId);
    if (call && call.status === "running") call.status = "waiting";
  }

  // The element line an approval showed for a call, and whether its typed text is masked (the
  // tool card keeps both after the answer).
  remember(approval) {
    const call = this.byId.get(approval.itemId);
    if (!call) return;
    call.targetLine = approval.request.targetLine || call.targetLine;
    call.passwordTarget = call.passwordTarget || approval.request.passwordTarget === true;
    call.targetOrigin = approval.request.targetOrigin || call.targetOrigin;
    call.targetName = approval.request.targetName || call.targetName;
    call.pageOrigin = approval.request.pageOrigin || call.pageOrigin;
    if (!call.params) call.params = approval.request.params;
  }
}

function statusOf(result) {
  if (result.ok) return "ok";
  const code = result.code || result.outcome;
  if (code === "storage_unavailable") return "storage"; // refused while the database did not answer
  if (["declined", "cancelled", "timed_out"].includes(code) || ["declined", "cancelled", "timed_out"].includes(result.outcome)) return "declined";
  if (result.outcome === "denied" || ["sensitive_origin", "rule_deny", "scope_lock", "script_scheme", "denied", "invalid_destination", "ssrf_blocked"].includes(code)) return "denied";
  return "failed";
}
