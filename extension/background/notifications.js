// A browser notification for every approval that waits, with a fixed text: no tool, no
// parameters, no page content (a notification can be read by anyone near the screen and by the
// OS). Clicking it opens Tabwarden's chat on that thread; it goes away when the approval is
// answered or the thread's turn ends. The worker hears approvals through its own engine client.
import { onWorkerEvent } from "./ui-ports.js";
import { t } from "../ui/strings.js";

const PREFIX = "tabwarden-approval";
const PAGE = "ui/sidepanel.html";

function notificationId(threadId, approvalId) {
  return `${PREFIX}|${encodeURIComponent(threadId)}|${encodeURIComponent(approvalId)}`;
}

function parse(id) {
  const [prefix, thread, approval] = id.split("|");
  if (prefix !== PREFIX || !thread || !approval) return null;
  return { threadId: decodeURIComponent(thread), approvalId: decodeURIComponent(approval) };
}

async function ours() {
  const all = await chrome.notifications.getAll();
  return Object.keys(all).map((id) => ({ id, ...parse(id) })).filter((n) => n.threadId);
}

function show(threadId, approvalId) {
  chrome.notifications.create(notificationId(threadId, approvalId), {
    type: "basic",
    iconUrl: chrome.runtime.getURL("ui/icons/icon-128.png"),
    title: t("notify.title"),
    message: t("notify.approval"),
    requireInteraction: true,
    priority: 2,
  }).catch((err) => console.warn("Tabwarden: cannot show a notification", err));
}

async function clearWhere(match) {
  for (const n of await ours()) if (match(n)) chrome.notifications.clear(n.id);
}

async function receive(event) {
  switch (event.type) {
    case "initialized": {
      // After a (re)connect: exactly the approvals that still wait.
      const waiting = (event.snapshot && event.snapshot.pendingApprovals) || [];
      const keep = new Set(waiting.map((a) => notificationId(a.threadId, a.approvalId)));
      await clearWhere((n) => !keep.has(n.id));
      for (const approval of waiting) show(approval.threadId, approval.approvalId);
      return;
    }
    case "approval.request":
      show(event.threadId, event.approvalId);
      return;
    case "approval.resolved":
      chrome.notifications.clear(notificationId(event.threadId, event.approvalId));
      return;
    case "activity.updated": {
      const a = event.activity || {};
      if (!a.running || !a.pendingApprovals) await clearWhere((n) => n.threadId === a.threadId);
      return;
    }
    case "turn.complete":
      await clearWhere((n) => n.threadId === event.threadId);
      return;
    default:
  }
}

async function openThread(threadId) {
  const url = chrome.runtime.getURL(`${PAGE}?thread=${encodeURIComponent(threadId)}`);
  const [tab] = await chrome.tabs.query({ url: chrome.runtime.getURL(PAGE) + "*" });
  if (tab) {
    await chrome.tabs.update(tab.id, { url, active: true });
    await chrome.windows.update(tab.windowId, { focused: true });
  } else {
    await chrome.tabs.create({ url });
  }
}

onWorkerEvent((event) => {
  receive(event).catch((err) => console.warn("Tabwarden: notification update failed", err));
});

chrome.notifications.onClicked.addListener((id) => {
  const found = parse(id);
  if (!found) return;
  chrome.notifications.clear(id);
  openThread(found.threadId).catch((err) => console.warn("Tabwarden: cannot open the thread", err));
});
