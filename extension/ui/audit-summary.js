// The audit log read as calls: the rows one tool call left (the gatekeeper's decision, the
// user's answer, the decision again before it ran, how it ended) grouped by their call id, and
// one line a person can read for each group. No DOM here.
import { has, t } from "./strings.js";

// Rows (oldest first) -> [{key, rows, verdict}] in the order each call first appears. A row
// without a call id (an alert) is a group of its own.
export function groupCalls(rows) {
  const groups = new Map();
  for (const row of rows) {
    const key = row.callId ? `${row.threadId}|${row.callId}` : `seq:${row.seq}`;
    if (!groups.has(key)) groups.set(key, { key, rows: [], verdict: null });
    const group = groups.get(key);
    group.rows.push(row);
    if (row.kind === "decision" && !group.verdict) group.verdict = row.verdict;
  }
  return [...groups.values()];
}

// "Type on https://shop.example: asked you (the policy), you allowed it for this task, done."
export function summary(call, labels = new Map()) {
  const rows = call.rows;
  const alert = rows.find((row) => row.kind === "alert");
  if (alert && rows.length === 1) return t("settings.audit.line.alert", { detail: alert.detail || "" });
  const first = rows[0];
  const tool = labels.get(first.tool) || first.tool || first.kind;
  const origin = (rows.find((row) => row.targetOrigin) || {}).targetOrigin;
  const parts = [];
  const decision = rows.find((row) => row.kind === "decision");
  if (decision) parts.push(decisionText(decision));
  const answer = rows.find((row) => row.kind === "approval");
  if (answer) parts.push(word("answer", answer.approvalDecision));
  const outcome = [...rows].reverse().find((row) => row.kind === "outcome");
  if (outcome) parts.push(word("outcome", outcome.toolOutcome));
  const what = origin ? t("settings.audit.line.on", { tool, origin }) : tool;
  return parts.length ? `${what}: ${parts.join(", ")}.` : what;
}

function decisionText(row) {
  const verdict = word("verdict", row.verdict);
  return has(`settings.audit.why.${row.code}`) ? `${verdict} (${t(`settings.audit.why.${row.code}`)})` : verdict;
}

function word(kind, value) {
  const key = `settings.audit.${kind}.${value}`;
  return has(key) ? t(key) : String(value || "");
}
