"""The navigation guard: while a thread drives a tab, the browser itself refuses to send that tab
(its main frame, its frames, and the new tabs it opens) to an origin the gatekeeper would deny
the thread, whatever the page's JavaScript does: links, `location`, forms (`action`, `formaction`,
a field that submits itself), meta refresh, timers, `window.open`, `target=_blank`, and every
redirect hop of a navigation the agent started. The same rules hold the page's own requests (its
fetches, beacons, images, sockets): a blocked or denied site gets none of them, and under a scope
lock (unless the policy keeps it to navigations) nothing outside the lock does.

The mechanism is declarativeNetRequest session rules scoped with `tabIds`, chosen over
`webNavigation` and CDP `Fetch`:

- A rule acts in the browser's network stack before a request leaves, for every way a document
  is requested, and again for each redirect hop; nothing a page runs steps around it, and a
  `block` needs no host permission, so it holds on sites the extension may not script.
- It holds in every tab without the debugger. CDP `Fetch` sees requests only in the one tab the
  debugger is attached to (one at a time, behind the debugging bar) and not in the tabs a page
  opens; `webNavigation` reports a navigation once its request has gone, so it can only say what
  happened (which is what the guard uses it for: which navigation was blocked, which tab opened
  which).
- `tabIds` confines the rules to the driven tabs: the user's other tabs are untouched. One more
  set, with `excludedTabIds` listing every tab the host knows, covers the tabs it has not seen
  yet (a page's pop-ups) until it attributes them; a tab the user opens while a thread drives
  another is released as soon as the host sees it.

The host is the authority: it computes every rule from the gatekeeper (`Gatekeeper.reach`: the
blocked list, deny rules for navigation, the scope lock as an allow-list; `dnr.py`) and sends the
whole set whenever the driven tabs, a scope lock, the lists or the rules change; the extension
only installs it (`extension/background/navigation-guard.js`). A write on a tab is sent only once
the rules covering it are in force; when they cannot be installed the write is refused
(`guard_unavailable`). Nothing is sent per action otherwise.

What it cannot see: requests of the downloads API (declarativeNetRequest does not match them:
`probe.py` follows a download's hops in a guarded background tab first), and a back/forward
restore from the page cache (no request is made).

    dnr.py      a thread's reach as session rules for a set of tabs
    guard.py    `NavigationGuard`: which tabs are guarded for whom, the redirect hold, installing
    observed.py what the browser reports about guarded tabs (blocks, pop-ups, new URLs), part of it
    scopes.py   which tabs the rules cover and with what reach
    report.py   how a blocked navigation and what happened between calls read in a result; the
                watch of the running call
    probe.py    a download's redirect hops, judged in a guarded tab before the download
"""
