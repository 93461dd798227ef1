// Tabwarden page executor, part 7: synthetic input. These events are untrusted (isTrusted is
// false); trusted input through the debugger arrives with the L2 tools. Where the browser would
// perform a default action only for trusted input, the few that matter are emulated here.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("input")) return;
  TW.parts.add("input");
  const CODES = TW.codes;

  // Where the pointer is over the element: its centre; for an image map's area, a point of its
  // shape over its image (it has no box of its own).
  function aim(el) {
    if (el.localName === "area") return TW.areaPoint(el);
    const rect = el.getBoundingClientRect();
    return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
  }

  function mouseInit(el, button, buttons, detail, at = aim(el)) {
    const { x, y } = at;
    return {
      bubbles: true, cancelable: true, composed: true, view: el.ownerDocument.defaultView,
      clientX: x, clientY: y, button, buttons, detail,
    };
  }

  function fire(el, type, init) {
    const win = el.ownerDocument.defaultView;
    const Kind = type.startsWith("pointer") ? win.PointerEvent : type === "dblclick" || type.startsWith("mouse") || type === "contextmenu" || type === "click" ? win.MouseEvent : win.Event;
    const extra = type.startsWith("pointer") ? { pointerId: 1, pointerType: "mouse", isPrimary: true } : {};
    return el.dispatchEvent(new Kind(type, { ...init, ...extra }));
  }

  // What a mouse press may focus: anything in the tab order, an editing host, and an element
  // with any tabindex, -1 included (a tree's items, a grid's cells, a heading a widget moves
  // the focus to are focused by a real click though they are out of the tab order).
  function mouseFocusable(el) {
    if (typeof el.focus !== "function" || el.matches(":disabled")) return false;
    if (el.isContentEditable) return !(el.parentElement && el.parentElement.isContentEditable);  // the editing host
    return el.tabIndex >= 0 || el.hasAttribute("tabindex");
  }

  // The element a real press on `el` focuses: `el` or its nearest such ancestor, out of shadow
  // roots too; null when there is none (the press then takes the focus away).
  function focusOnPress(el) {
    for (let node = el; node; node = node.parentElement || node.getRootNode().host || null) {
      if (mouseFocusable(node)) return node;
    }
    return null;
  }

  function moveFocus(el) {
    const target = focusOnPress(el);
    const doc = el.ownerDocument;
    if (target) {
      if (target.getRootNode().activeElement !== target) target.focus({ preventScroll: true });
    } else if (doc.activeElement && doc.activeElement !== doc.body) {
      doc.activeElement.blur();
    }
  }

  function press(el, button, detail, at) {
    const buttons = button === 2 ? 2 : 1;
    fire(el, "pointerdown", mouseInit(el, button, buttons, detail, at));
    const allowed = fire(el, "mousedown", mouseInit(el, button, buttons, detail, at));
    if (allowed) moveFocus(el);
    fire(el, "pointerup", mouseInit(el, button, 0, detail, at));
    fire(el, "mouseup", mouseInit(el, button, 0, detail, at));
  }

  // An area's click carries its point, as the press before it did (a page reading where its
  // image map was clicked sees the area's shape); a dispatched click follows its link as
  // click() does.
  function activate(el, detail, at) {
    if (typeof el.click === "function" && detail === 1 && el.localName !== "area") el.click();
    else fire(el, "click", mouseInit(el, 0, 0, detail, at));
  }

  TW.input = {};

  TW.input.click = (el, { button = "left", doubleClick = false } = {}) => {
    // A mouse comes over the element before it presses: pages that keep a popup open while
    // the pointer is over it (a combobox's list on the blur its press causes) rely on that.
    // One point for the whole click, read once (an area's is found by hit tests).
    const at = aim(el);
    TW.input.hover(el, at);
    if (button === "right") {
      press(el, 2, 1, at);
      fire(el, "contextmenu", mouseInit(el, 2, 0, 1, at));
      return;
    }
    press(el, 0, 1, at);
    activate(el, 1, at);
    if (doubleClick) {
      press(el, 0, 2, at);
      activate(el, 2, at);
      fire(el, "dblclick", mouseInit(el, 0, 0, 2, at));
    }
  };

  TW.input.hover = (el, at = aim(el)) => {
    const init = mouseInit(el, 0, 0, 0, at);
    for (const type of ["pointerover", "mouseover"]) fire(el, type, init);
    for (const type of ["pointerenter", "mouseenter"]) fire(el, type, { ...init, bubbles: false });
    for (const type of ["pointermove", "mousemove"]) fire(el, type, init);
  };

  function nativeSetter(el) {
    const win = el.ownerDocument.defaultView;
    const proto = el.localName === "textarea" ? win.HTMLTextAreaElement.prototype : win.HTMLInputElement.prototype;
    return Object.getOwnPropertyDescriptor(proto, "value").set;
  }

  // Set a form field's value the way frameworks notice: through the prototype's setter, then
  // input and change events.
  TW.input.setValue = (el, value, data) => {
    nativeSetter(el).call(el, value);
    const win = el.ownerDocument.defaultView;
    el.dispatchEvent(new win.InputEvent("input", { bubbles: true, composed: true, inputType: "insertText", data: data ?? value }));
  };

  TW.input.change = (el) => {
    el.dispatchEvent(new (el.ownerDocument.defaultView.Event)("change", { bubbles: true }));
  };

  TW.input.currentText = (el) => (el.localName === "input" || el.localName === "textarea" ? el.value : el.textContent);

  function selectContents(el) {
    const doc = el.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(el);
    const selection = doc.defaultView.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function collapseToEnd(el) {
    const doc = el.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(el);
    range.collapse(false);
    const selection = doc.defaultView.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // Write into a contenteditable through the editing commands, so editors see their usual input
  // events; falls back to replacing the text when the command is refused.
  function typeEditable(el, text, append) {
    el.focus({ preventScroll: true });
    if (append) collapseToEnd(el);
    else selectContents(el);
    const doc = el.ownerDocument;
    if (text === "" ? doc.execCommand("delete") : doc.execCommand("insertText", false, text)) return;
    el.textContent = append ? el.textContent + text : text;
    el.dispatchEvent(new (doc.defaultView.InputEvent)("input", { bubbles: true, composed: true, inputType: "insertText", data: text }));
  }

  function keyInit(el, key, code, modifiers = {}) {
    return { key, code, bubbles: true, cancelable: true, composed: true, view: el.ownerDocument.defaultView, ...modifiers };
  }

  // The legacy numbers many widgets still read (`event.keyCode || event.which`): without them
  // an Enter that saves a grid cell or an arrow that moves a slider is ignored.
  const NAMED_KEY_CODES = {
    Backspace: 8, Tab: 9, Enter: 13, Shift: 16, Control: 17, Alt: 18, Pause: 19, CapsLock: 20, Escape: 27, " ": 32,
    PageUp: 33, PageDown: 34, End: 35, Home: 36, ArrowLeft: 37, ArrowUp: 38, ArrowRight: 39, ArrowDown: 40,
    Insert: 45, Delete: 46, Meta: 91, ContextMenu: 93,
  };
  const PUNCTUATION_KEY_CODES = {
    Semicolon: 186, Equal: 187, Comma: 188, Minus: 189, Period: 190, Slash: 191, Backquote: 192, BracketLeft: 219,
    Backslash: 220, BracketRight: 221, Quote: 222,
  };

  function legacyKeyCode(key, code) {
    if (key in NAMED_KEY_CODES) return NAMED_KEY_CODES[key];
    if (/^F([1-9]|1[0-2])$/.test(key)) return 111 + Number(key.slice(1));
    if (/^Key[A-Z]$/.test(code)) return code.charCodeAt(3);
    if (/^Digit[0-9]$/.test(code)) return code.charCodeAt(5);
    if (code in PUNCTUATION_KEY_CODES) return PUNCTUATION_KEY_CODES[code];
    if (/^[a-z0-9]$/i.test(key)) return key.toUpperCase().charCodeAt(0);
    return 0;
  }

  function keyEvent(el, type, key, code, modifiers) {
    // keypress carries the character's code; keydown and keyup the key's.
    const charCode = type === "keypress" ? (key === "Enter" ? 13 : key.length === 1 ? key.charCodeAt(0) : 0) : 0;
    const keyCode = type === "keypress" ? charCode : legacyKeyCode(key, code);
    const init = { ...keyInit(el, key, code, modifiers), keyCode, which: keyCode, charCode };
    return el.dispatchEvent(new (el.ownerDocument.defaultView.KeyboardEvent)(type, init));
  }

  function codeFor(char) {
    if (/^[a-z]$/i.test(char)) return `Key${char.toUpperCase()}`;
    if (/^[0-9]$/.test(char)) return `Digit${char}`;
    if (char === " ") return "Space";
    return "";
  }

  // Type `text` into `el`; returns the text the field should now hold.
  TW.input.type = async (el, text, { mode = "replace", slowly = false, signal } = {}) => {
    const append = mode === "append";
    if (el.localName !== "input" && el.localName !== "textarea") {
      const expected = (append ? el.textContent : "") + text;
      if (slowly) {
        if (!append) typeEditable(el, "", false);
        for (const char of text) {
          TW.checkAborted(signal);
          keyEvent(el, "keydown", char, codeFor(char));
          typeEditable(el, char, true);
          keyEvent(el, "keyup", char, codeFor(char));
          await TW.sleep(20, signal);
        }
      } else {
        typeEditable(el, text, append);
      }
      return expected;
    }
    el.focus({ preventScroll: true });
    const start = append ? el.value : "";
    if (slowly) {
      if (!append && el.value !== "") TW.input.setValue(el, "", null);
      let current = start;
      for (const char of text) {
        TW.checkAborted(signal);
        const allowed = keyEvent(el, "keydown", char, codeFor(char));
        keyEvent(el, "keypress", char, codeFor(char));
        if (allowed) {
          current += char;
          TW.input.setValue(el, current, char);
        }
        keyEvent(el, "keyup", char, codeFor(char));
        await TW.sleep(20, signal);
      }
    } else {
      TW.input.setValue(el, start + text, text);
    }
    TW.input.change(el);
    return start + text;
  };

  // Enter on the field, then submit its form the way a browser would.
  TW.input.submit = (el) => {
    const allowed = keyEvent(el, "keydown", "Enter", "Enter");
    keyEvent(el, "keypress", "Enter", "Enter");
    keyEvent(el, "keyup", "Enter", "Enter");
    const form = el.form || (el.closest && el.closest("form"));
    if (allowed && form && el.localName !== "textarea") {
      if (typeof form.requestSubmit === "function") form.requestSubmit();
      else form.submit();
      return true;
    }
    return false;
  };

  // Choose options by value or visible text; returns the labels and the values chosen. Unknown
  // values fail with the list of what the select offers.
  TW.input.select = (el, values) => {
    const options = [...el.options];
    const chosen = [];
    for (const wanted of values) {
      const text = TW.collapse(wanted);
      const match = options.find((o) => o.value === wanted) || options.find((o) => TW.collapse(o.textContent) === text);
      if (!match) {
        const available = options.slice(0, 50).map((o) => TW.collapse(o.textContent) || o.value);
        throw TW.fail(CODES.OPTION_NOT_FOUND, `no option matches ${TW.quote(wanted)}; available: ${available.map(TW.quote).join(", ")}`, "precheck", false, { available });
      }
      if (match.disabled) throw TW.fail(CODES.DISABLED, `option ${TW.quote(TW.collapse(match.textContent))} is disabled`, "precheck", false);
      if (!chosen.includes(match)) chosen.push(match);
    }
    if (chosen.length > 1 && !el.multiple) {
      throw TW.fail(CODES.INVALID_PARAMS, "this select takes a single value", "precheck", false);
    }
    if (el.multiple) for (const option of options) option.selected = chosen.includes(option);
    else chosen[0].selected = true;
    const win = el.ownerDocument.defaultView;
    el.dispatchEvent(new win.Event("input", { bubbles: true, composed: true }));
    TW.input.change(el);
    return { labels: chosen.map((o) => TW.collapse(o.textContent) || o.value), values: chosen.map((o) => o.value) };
  };

  TW.input.selectedValues = (el) => [...el.options].filter((o) => o.selected).map((o) => o.value);

  // ---- keys

  const KEY_ALIASES = {
    ctrl: "Control", control: "Control", cmd: "Meta", command: "Meta", meta: "Meta", super: "Meta", win: "Meta",
    alt: "Alt", option: "Alt", shift: "Shift", esc: "Escape", escape: "Escape", return: "Enter", enter: "Enter",
    space: " ", spacebar: " ", up: "ArrowUp", down: "ArrowDown", left: "ArrowLeft", right: "ArrowRight",
    arrowup: "ArrowUp", arrowdown: "ArrowDown", arrowleft: "ArrowLeft", arrowright: "ArrowRight", tab: "Tab",
    backspace: "Backspace", delete: "Delete", del: "Delete", home: "Home", end: "End", pageup: "PageUp",
    pagedown: "PageDown", insert: "Insert",
  };
  const MODIFIERS = { Control: "ctrlKey", Shift: "shiftKey", Alt: "altKey", Meta: "metaKey" };

  // "Control+Shift+a" -> { key, code, modifiers }. Throws invalid_params on nonsense.
  TW.input.parseKey = (combo) => {
    const parts = String(combo).split("+");
    // "Control++" means Control and "+".
    const tokens = [];
    for (let i = 0; i < parts.length; i++) {
      if (parts[i] === "" && i === parts.length - 1 && parts.length > 1) tokens.push("+");
      else if (parts[i] !== "") tokens.push(parts[i]);
    }
    if (!tokens.length) throw TW.fail(CODES.INVALID_PARAMS, `cannot read the key ${TW.quote(combo)}`, "precheck", false);
    const modifiers = {};
    let key = null;
    for (const [i, token] of tokens.entries()) {
      const named = KEY_ALIASES[token.toLowerCase()] || (/^f([1-9]|1[0-2])$/i.test(token) ? token.toUpperCase() : null);
      const name = named || (token.length === 1 ? token : null);
      if (!name) throw TW.fail(CODES.INVALID_PARAMS, `unknown key ${TW.quote(token)} in ${TW.quote(combo)}`, "precheck", false);
      if (MODIFIERS[name] && i < tokens.length - 1) modifiers[MODIFIERS[name]] = true;
      else if (i === tokens.length - 1) key = name;
      else throw TW.fail(CODES.INVALID_PARAMS, `${TW.quote(token)} is not a modifier in ${TW.quote(combo)}`, "precheck", false);
    }
    const code = key.length === 1 ? codeFor(key) || "" : key === " " ? "Space" : key;
    return { key, code, modifiers };
  };

  function tabbables(doc) {
    return [...doc.querySelectorAll("a[href], button, input, select, textarea, [tabindex], [contenteditable]")].filter(
      (el) => el.tabIndex >= 0 && !el.matches(":disabled") && el.getClientRects().length > 0,
    );
  }

  function isTextField(el) {
    return TW.isWritable(el);
  }

  function insert(el, text) {
    const doc = el.ownerDocument;
    if (doc.execCommand("insertText", false, text)) return;
    if (el.localName === "input" || el.localName === "textarea") {
      TW.input.setValue(el, el.value + text, text);
    }
  }

  // Dispatch a key combination at `el` and emulate the default action a trusted key would have.
  // Returns a short description of that emulated action ("" when there was none).
  TW.input.pressKey = (el, { key, code, modifiers }) => {
    const doc = el.ownerDocument;
    const allowed = keyEvent(el, "keydown", key, code, modifiers);
    const printable = key.length === 1 && !modifiers.ctrlKey && !modifiers.metaKey && !modifiers.altKey;
    if (printable || key === "Enter") keyEvent(el, "keypress", key, code, modifiers);
    let effect = "";
    if (allowed) {
      const command = modifiers.ctrlKey || modifiers.metaKey;
      if (key === "Enter" && !command) {
        if (el.localName === "input" && (el.form || el.closest("form"))) {
          (el.form || el.closest("form")).requestSubmit();
          effect = "submitted the form";
        } else if (el.localName === "textarea" || el.isContentEditable) {
          insert(el, "\n");
          effect = "inserted a line break";
        } else if (/^(a|area|button|summary)$/.test(el.localName) || el.getAttribute("role") === "button") {
          el.click();
          effect = "activated the element";
        }
      } else if (key === "Tab") {
        const list = tabbables(doc);
        const next = list[(list.indexOf(el) + (modifiers.shiftKey ? -1 : 1) + list.length) % list.length];
        if (next) {
          next.focus();
          effect = `moved focus to ${TW.describe(next)}`;
        }
      } else if (key === " " && !command && (el.localName === "button" || (el.localName === "input" && /^(checkbox|radio|button|submit|reset)$/.test(el.type)))) {
        el.click();
        effect = "activated the element";
      } else if (command && key.toLowerCase() === "a") {
        if (el.localName === "input" || el.localName === "textarea") el.select();
        else doc.execCommand("selectAll");
        effect = "selected all";
      } else if ((key === "Backspace" || key === "Delete") && isTextField(el)) {
        doc.execCommand(key === "Backspace" ? "delete" : "forwardDelete");
        effect = "deleted text";
      } else if (printable && isTextField(el)) {
        insert(el, key);
        effect = "inserted the character";
      }
    }
    keyEvent(el, "keyup", key, code, modifiers);
    return effect;
  };
})();
