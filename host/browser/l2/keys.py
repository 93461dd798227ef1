"""Key definitions for trusted keyboard input (`Input.dispatchKeyEvent`).

A page sees `key`, `code` and `keyCode`; sending only `text` (as simple automation does)
leaves `code` empty and `keyCode` 0, which pages that check real key events reject. The table
follows the US layout. `parse_combo("Control+Shift+a")` turns the model's notation into
modifiers plus one key; unknown names are refused with the list of valid ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from host.tools.failure import ToolCode, ToolFailure

ALT, CONTROL, META, SHIFT = 1, 2, 4, 8


@dataclass(frozen=True)
class KeyDef:
    key: str
    code: str
    key_code: int
    text: str = ""  # what the key types (empty for keys that type nothing)
    shift_key: str = ""  # the key with Shift held ("A" for "a", "!" for "1")
    location: int = 0


_NAMED: dict[str, KeyDef] = {
    "Enter": KeyDef("Enter", "Enter", 13, "\r"),
    "Tab": KeyDef("Tab", "Tab", 9),
    "Backspace": KeyDef("Backspace", "Backspace", 8),
    "Delete": KeyDef("Delete", "Delete", 46),
    "Escape": KeyDef("Escape", "Escape", 27),
    "Space": KeyDef(" ", "Space", 32, " "),
    "ArrowUp": KeyDef("ArrowUp", "ArrowUp", 38),
    "ArrowDown": KeyDef("ArrowDown", "ArrowDown", 40),
    "ArrowLeft": KeyDef("ArrowLeft", "ArrowLeft", 37),
    "ArrowRight": KeyDef("ArrowRight", "ArrowRight", 39),
    "Home": KeyDef("Home", "Home", 36),
    "End": KeyDef("End", "End", 35),
    "PageUp": KeyDef("PageUp", "PageUp", 33),
    "PageDown": KeyDef("PageDown", "PageDown", 34),
    "Insert": KeyDef("Insert", "Insert", 45),
    "ContextMenu": KeyDef("ContextMenu", "ContextMenu", 93),
    **{f"F{n}": KeyDef(f"F{n}", f"F{n}", 111 + n) for n in range(1, 13)},
}
MODIFIERS: dict[str, tuple[KeyDef, int]] = {
    "Shift": (KeyDef("Shift", "ShiftLeft", 16, location=1), SHIFT),
    "Control": (KeyDef("Control", "ControlLeft", 17, location=1), CONTROL),
    "Alt": (KeyDef("Alt", "AltLeft", 18, location=1), ALT),
    "Meta": (KeyDef("Meta", "MetaLeft", 91, location=1), META),
}
_MODIFIER_ALIASES = {"shift": "Shift", "control": "Control", "ctrl": "Control", "alt": "Alt", "option": "Alt",
                     "meta": "Meta", "cmd": "Meta", "command": "Meta", "super": "Meta"}
_NAMED_ALIASES = {"esc": "Escape", "return": "Enter", "del": "Delete", "up": "ArrowUp", "down": "ArrowDown",
                  "left": "ArrowLeft", "right": "ArrowRight", "pgup": "PageUp", "pgdn": "PageDown", " ": "Space"}

# Printable US-layout keys: (unshifted, shifted, code, keyCode).
_PRINTABLE = [
    ("`", "~", "Backquote", 192), ("-", "_", "Minus", 189), ("=", "+", "Equal", 187), ("[", "{", "BracketLeft", 219),
    ("]", "}", "BracketRight", 221), ("\\", "|", "Backslash", 220), (";", ":", "Semicolon", 186),
    ("'", '"', "Quote", 222), (",", "<", "Comma", 188), (".", ">", "Period", 190), ("/", "?", "Slash", 191),
    *[(str(d), ")!@#$%^&*("[d], f"Digit{d}", 48 + d) for d in range(10)],
    *[(c, c.upper(), f"Key{c.upper()}", ord(c.upper())) for c in "abcdefghijklmnopqrstuvwxyz"],
]
_BY_CHAR: dict[str, tuple[KeyDef, bool]] = {}
for _low, _high, _code, _kc in _PRINTABLE:
    _BY_CHAR[_low] = (KeyDef(_low, _code, _kc, _low, _high), False)
    _BY_CHAR[_high] = (KeyDef(_high, _code, _kc, _high, _high), True)
_BY_CHAR[" "] = (_NAMED["Space"], False)


def for_char(char: str) -> tuple[KeyDef, bool]:
    """The key that types `char` and whether Shift is needed; characters outside the US layout
    are sent as a key event carrying only their text."""
    if char == "\n":
        return _NAMED["Enter"], False
    found = _BY_CHAR.get(char)
    if found is not None:
        return found
    return KeyDef(char, "", 0, char), False


def _main_key(name: str) -> KeyDef:
    if len(name) == 1:
        return for_char(name)[0]
    canonical = _NAMED_ALIASES.get(name.lower()) or next((k for k in _NAMED if k.lower() == name.lower()), None)
    if canonical is None:
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"unknown key {name!r}: use a single character or one of "
                          f"{', '.join(sorted(_NAMED))}, with modifiers such as Control+, Shift+, Alt+, Meta+",
                          phase="validate", details={"dispatched": False})
    return _NAMED[canonical]


@dataclass(frozen=True)
class Combo:
    modifiers: tuple[str, ...]  # canonical modifier names, in the order pressed
    key: KeyDef | None  # None when only modifiers are pressed

    @property
    def mask(self) -> int:
        mask = 0
        for name in self.modifiers:
            mask |= MODIFIERS[name][1]
        return mask

    def describe(self) -> str:
        return "+".join([*self.modifiers, *([self.key.key if self.key.key != " " else "Space"] if self.key else [])])


def parse_combo(text: str) -> Combo:
    """`Control+Shift+a`, `Enter`, `Shift+Tab`, `Control++` -> a Combo; raises invalid_params."""
    if not text or len(text) > 64:
        raise ToolFailure(ToolCode.INVALID_PARAMS, "key must be 1..64 characters", phase="validate", details={"dispatched": False})
    if text.endswith("++"):
        parts = [*text[:-2].split("+"), "+"] if len(text) > 2 else ["+"]
    elif text == "+":
        parts = ["+"]
    else:
        parts = text.split("+")
    if any(part == "" for part in parts):
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"cannot read the key combination {text!r}", phase="validate",
                          details={"dispatched": False})
    *mods, last = parts
    modifiers: list[str] = []
    for mod in mods:
        canonical = _MODIFIER_ALIASES.get(mod.lower())
        if canonical is None:
            raise ToolFailure(ToolCode.INVALID_PARAMS, f"unknown modifier {mod!r} in {text!r}: use Control, Shift, Alt or Meta",
                              phase="validate", details={"dispatched": False})
        if canonical not in modifiers:
            modifiers.append(canonical)
    lone = _MODIFIER_ALIASES.get(last.lower()) if len(last) > 1 else None
    if lone is not None:
        if lone not in modifiers:
            modifiers.append(lone)
        return Combo(tuple(modifiers), None)
    return Combo(tuple(modifiers), _main_key(last))
