// ElementInternals, seen by the snapshot. Components of several design systems set their role,
// name and states through ElementInternals (`attachInternals()`), where no attribute shows them
// and the extension's isolated world cannot look. This file runs in the page's MAIN world at
// document_start in every frame we may script, before any page script, so it sees every
// `attachInternals()` the page's components make: it keeps each element's internals in its
// closure and, asked about one element, answers with the ARIA the internals hold.
//
// The link with the isolated world is made once, before the page runs: the isolated side
// (internals-link.js, also at document_start) sends a random name under a fixed one, and this
// side listens under that random name from then on; whichever of the two runs first waits for the
// other. Questions are events of that name dispatched on the element itself (composed, so they
// reach the window's capture listeners from inside open shadow roots); our listener is the first
// at the window and stops them there, and the answer goes back as a string under a second name
// derived from the first. A page that runs later cannot listen for names it never saw, and a
// hello it sends after the link is made is ignored.
//
// What a page can see: `attachInternals` is a Proxy of the browser's function (same name and
// length; its source text reads as native code, without the name). The internals themselves are
// the browser's, untouched.
(() => {
  "use strict";
  const HELLO = "tabwarden-internals-hello";
  const READY = "tabwarden-internals-ready";
  const proto = globalThis.HTMLElement && HTMLElement.prototype;
  const original = proto && proto.attachInternals;
  if (typeof original !== "function" || typeof ElementInternals !== "function") return;
  const { apply, getOwnPropertyDescriptor, defineProperty } = Reflect;
  const stringify = JSON.stringify;
  const mapGet = WeakMap.prototype.get;
  const mapSet = WeakMap.prototype.set;
  const composedPath = Event.prototype.composedPath;
  const stopNow = Event.prototype.stopImmediatePropagation;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const listen = EventTarget.prototype.addEventListener;
  const unlisten = EventTarget.prototype.removeEventListener;
  const detailOf = getOwnPropertyDescriptor(CustomEvent.prototype, "detail").get;
  const textOf = getOwnPropertyDescriptor(Node.prototype, "textContent").get;
  const NewCustomEvent = CustomEvent;
  const internalsOf = new WeakMap();
  // The ARIA the internals may hold, as the attribute each one reflects; read with the browser's
  // own getters, kept now.
  const FIELDS = [];
  for (const key of Object.getOwnPropertyNames(ElementInternals.prototype)) {
    const getter = getOwnPropertyDescriptor(ElementInternals.prototype, key)?.get;
    if (!getter) continue;
    if (key === "role") FIELDS[FIELDS.length] = ["role", getter];
    else if (/^aria[A-Z][A-Za-z]*$/.test(key) && !/Element/.test(key)) FIELDS[FIELDS.length] = [`aria-${key.slice(4).toLowerCase()}`, getter];
  }
  const labelsGetter = getOwnPropertyDescriptor(ElementInternals.prototype, "labels")?.get;
  const labelledByGetter = getOwnPropertyDescriptor(ElementInternals.prototype, "ariaLabelledByElements")?.get;

  const wrapped = new Proxy(original, {
    apply(target, self, args) {
      const internals = apply(target, self, args);
      apply(mapSet, internalsOf, [self, internals]);
      return internals;
    },
  });
  defineProperty(proto, "attachInternals", { ...getOwnPropertyDescriptor(proto, "attachInternals"), value: wrapped });

  const texts = (list) => {
    let out = "";
    for (let i = 0; list && i < list.length; i++) out += (out ? " " : "") + (apply(textOf, list[i], []) || "");
    return out;
  };

  function describe(el) {
    const internals = apply(mapGet, internalsOf, [el]);
    if (!internals) return "";
    const out = {};
    let any = false;
    for (let i = 0; i < FIELDS.length; i++) {
      let value = null;
      try {
        value = apply(FIELDS[i][1], internals, []);
      } catch (_) {
        // a field this element's internals cannot give (not form-associated)
      }
      if (typeof value === "string") {
        out[FIELDS[i][0]] = value;
        any = true;
      }
    }
    for (const [key, getter] of [["labels", labelsGetter], ["labelledby", labelledByGetter]]) {
      if (!getter) continue;
      try {
        const text = texts(apply(getter, internals, []));
        if (text) {
          out[key] = text;
          any = true;
        }
      } catch (_) {
        // not form-associated: no labels
      }
    }
    return any ? stringify(out) : "";
  }

  let linked = false;
  function link(name) {
    if (linked || typeof name !== "string" || name.length < 16) return;
    linked = true;
    apply(unlisten, document, [HELLO, onHello, true]);
    const answer = `${name}-a`;
    apply(listen, window, [name, (event) => {
      apply(stopNow, event, []);
      const target = apply(composedPath, event, [])[0];
      apply(dispatch, document, [new NewCustomEvent(answer, { detail: target ? describe(target) : "" })]);
    }, true]);
    apply(dispatch, document, [new NewCustomEvent(answer, { detail: "linked" })]);
  }
  function onHello(event) {
    apply(stopNow, event, []);
    link(apply(detailOf, event, []));
  }
  apply(listen, document, [HELLO, onHello, true]);
  apply(dispatch, document, [new NewCustomEvent(READY)]);
})();
