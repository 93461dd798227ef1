// The line a page shows while the Tabwarden host is not connected. Chrome reports why in its own
// words ("Specified native messaging host not found."); a person needs to know what to do.

import { t } from "./strings.js";

// Chrome's native-messaging errors, each mapped to what the user can do about it.
const CAUSES = [
  [/native messaging host not found/i, "link.notRegistered"],
  [/invalid native messaging host name/i, "link.notRegistered"],
  [/access to the specified native messaging host is forbidden/i, "link.forbidden"],
  [/native host has exited/i, "link.exited"],
  [/error when communicating with the native messaging host/i, "link.broken"],
];

export function linkText(state) {
  if (!state) return t("link.connecting");
  if (state.fatal) return t("link.fatal", { message: state.fatal.message });
  if (state.ready) return "";
  if (!state.lastError) return t("link.connecting");
  const reason = String(state.lastError).replace(/\.$/, "");
  const known = CAUSES.find(([pattern]) => pattern.test(reason));
  return t(known ? known[1] : "link.down", { reason });
}
