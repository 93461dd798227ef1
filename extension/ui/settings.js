// The settings page: permission matrix, origin lists, scope lock, "test a call", providers, the
// model's memory, MCP servers, skills and plugins, and the audit log. A view like the side panel: it asks the host for the state, sends changes as
// ops, and redraws from the `settings.state` the host sends after every change (to every page).
import { clear, h } from "./dom.js";
import { EngineClient } from "./engine-client.js";
import { linkText } from "./link-text.js";
import { AuditSection } from "./settings-audit.js";
import { DetailsSection } from "./settings-details.js";
import { ExplainSection } from "./settings-explain.js";
import { McpSection } from "./settings-mcp.js";
import { MemorySection } from "./settings-memory.js";
import { OriginsSection } from "./settings-origins.js";
import { PluginsSection } from "./settings-plugins.js";
import { PolicySection, RulesSection } from "./settings-permissions.js";
import { ProvidersSection } from "./settings-providers.js";
import { SectionIndex } from "./settings-index.js";
import { ScopeSection } from "./settings-scope.js";
import { SkillsSection } from "./settings-skills.js";
import { applyStrings, t } from "./strings.js";

const $ = (selector) => document.querySelector(selector);

applyStrings(document);
const index = new SectionIndex($("#section-index"));
let drawn = false;
const client = new EngineClient("settings");
const context = {
  client,
  threads: [],
  state: null,
  scopeThread: null,
  // Send a change; show "Saved." or why not in `status`; resolves with the reply.
  async change(op, status) {
    if (status) status.textContent = "";
    const reply = await client.send(op);
    if (status) {
      status.textContent = reply.type === "command.rejected" || reply.type === "error"
        ? t("settings.refused", { message: reply.message }) : t("settings.saved");
      status.classList.toggle("bad", reply.type === "command.rejected" || reply.type === "error");
    }
    if (reply.type === "command.ack" && context.scopeThread) refresh();
    return reply;
  },
};
const rules = new RulesSection($("#rules"), context);
// Another section's "add a rule" hint fills the rules form.
context.prefillRule = (tool, origin, verdict) => rules.prefill(tool, origin, verdict);
const sections = [
  new PolicySection($("#policy"), context),
  rules,
  new OriginsSection($("#origins"), context),
  new ScopeSection($("#scope"), context, refresh),
  new ExplainSection($("#explain"), context),
  new ProvidersSection($("#providers"), context),
  new DetailsSection($("#details"), context),
  new AuditSection($("#audit"), context),
];
// The memory has its own state (`memory.state`, also sent when the model writes): it loads and
// redraws itself.
new MemorySection($("#memory"), context);
// So do the MCP servers (`mcp.state`, also sent after a background connect or a REPL change).
new McpSection($("#mcp"), context);
// Skills and plugins share one state (`skills.state`, also sent after a CLI or REPL change).
new SkillsSection($("#skills"), context);
new PluginsSection($("#plugins"), context);

client.on("link.state", () => {
  const state = client.link || {};
  const line = $("#link");
  line.textContent = linkText(state);
  line.hidden = !line.textContent;
});
client.on("fatal.reload_required", (m) => { $("#link").textContent = t("link.reload", { message: m.message }); $("#link").hidden = false; });
client.on("initialized", (m) => {
  context.threads = (m.snapshot && m.snapshot.threads) || [];
  refresh();
});
// The thread choosers follow the thread list.
client.on("thread.created", (m) => {
  context.threads = [m.meta, ...context.threads.filter((x) => x.id !== m.threadId)];
  if (context.state) draw();
});
client.on("thread.updated", (m) => {
  context.threads = context.threads.map((x) => (x.id === m.threadId ? { ...x, ...m.patch } : x));
  if (context.state) draw();
});
client.on("thread.deleted", (m) => {
  context.threads = context.threads.filter((x) => x.id !== m.threadId);
  if (context.scopeThread === m.threadId) context.scopeThread = null;
  if (context.state) draw();
});
client.on("settings.state", (m) => {
  // A broadcast after someone's change carries no thread part: keep the one shown.
  const state = { ...m.state };
  if (!m.submissionId && context.state && context.state.thread) state.thread = context.state.thread;
  context.state = state;
  draw();
});
client.connect();

function refresh() {
  client.send({ type: "settings.get", ...(context.scopeThread ? { threadId: context.scopeThread } : {}) });
}

function draw() {
  const problems = $("#problems");
  clear(problems);
  const list = context.state.problems || [];
  if (list.length) problems.append(h("p", { text: t("settings.problems") }), h("ul", {}, list.map((p) => h("li", { text: p }))));
  for (const section of sections) section.render(context.state);
  if (!drawn) {
    drawn = true;
    requestAnimationFrame(() => index.revealHash());
  }
}
