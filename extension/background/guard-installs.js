// The navigation guard's rules as the browser holds them. Every install replaces them all, one
// install at a time in the order the host sent them. A page load the host sends right after an
// install waits for it (`rulesInForce`), so the host need not wait for the install's answer
// before it sends the load.
let chain = Promise.resolve();
let latest = Promise.resolve();
// The ids of the rules in force as this worker last set them (updates are all or nothing);
// null until its first install, which asks the browser (a worker before it may have left some).
let installedIds = null;

// Replace every session rule with `rules` in one update (no moment without a guard); resolves
// once the browser enforces them, rejects when it refused them (the previous rules stay).
export function replaceRules(rules) {
  const run = chain.then(async () => {
    const removeRuleIds = installedIds ?? (await chrome.declarativeNetRequest.getSessionRules()).map((rule) => rule.id);
    await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds, addRules: rules });
    installedIds = rules.map((rule) => rule.id);
  });
  chain = run.catch(() => {});
  latest = run;
  return run;
}

// Resolves once every install received so far is in force; rejects when the latest was refused.
export function rulesInForce() {
  return latest;
}
