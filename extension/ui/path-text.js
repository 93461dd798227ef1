// A file path shown short enough for a narrow window (its last two parts), with the full path in
// the tooltip and a button that copies it.
import { h } from "./dom.js";
import { t } from "./strings.js";

export function shortPath(path) {
  const parts = String(path).split(/[\\/]/).filter(Boolean);
  return parts.length > 2 ? `…/${parts.slice(-2).join("/")}` : String(path);
}

export function pathText(path) {
  const copy = h("button", { type: "button", class: "link copy-path", text: t("settings.copyPath"),
    "aria-label": t("settings.copyPathLabel", { path }),
    onclick: () => navigator.clipboard.writeText(path).then(() => { copy.textContent = t("settings.copied"); },
      () => {}) });
  return h("span", { class: "path" }, h("code", { title: path, text: shortPath(path) }), " ", copy);
}

// "managed:/etc/…/policy.json" -> the kind, then the path shown short; other provenances as they are.
export function provenanceText(provenance) {
  const at = String(provenance).indexOf(":");
  const kind = at > 0 ? provenance.slice(0, at) : "";
  const rest = at > 0 ? provenance.slice(at + 1) : "";
  if (!kind) return /[\\/]/.test(provenance) ? pathText(provenance) : h("span", { text: provenance });
  if (!/[\\/]/.test(rest)) return h("span", { text: provenance });
  return h("span", {}, `${kind} `, pathText(rest));
}
