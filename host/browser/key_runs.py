"""What a run of `press_key` calls has typed into a tab, so that a value typed one key per call
(an IBAN in 22 presses, with a ref or into whatever has the focus) is judged whole by the
gatekeeper, as a value typed in one call is.

Per tab, the printable keys pressed since the last other write, in order, with the ref they were
pressed on ("" for the focused element). Backspace takes the last one back; any other key that is
not a character (Enter, Tab, arrows), or any other write on the tab, ends the run. The run is the
host's own record of what it sent, never the page's account of it.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_RUN = 512  # longer than any account, address or code a person types key by key
_SHIFTS = frozenset({"shift", "capslock"})


@dataclass
class _Run:
    ref: str
    text: str


class KeyRuns:
    """The press_key runs of every tab."""

    def __init__(self) -> None:
        self._runs: dict[int, _Run] = {}

    def typed(self, tab_id: int, ref: str | None) -> str:
        """What the run on `tab_id` has typed into `ref` (or the focus) so far ("" when none)."""
        run = self._runs.get(tab_id)
        return run.text if run is not None and run.ref == (ref or "") else ""

    def pressed(self, tab_id: int, ref: str | None, key: str, times: int = 1) -> None:
        """Record a key press that ran on the tab."""
        where = ref or ""
        run = self._runs.get(tab_id)
        if len(key) == 1 and key.isprintable():
            if run is None or run.ref != where:
                run = self._runs[tab_id] = _Run(where, "")
            run.text = (run.text + key * max(1, times))[-MAX_RUN:]
        elif key.lower() == "backspace" and run is not None and run.ref == where:
            run.text = run.text[:-max(1, times)]
        elif key.lower() not in _SHIFTS:
            self._runs.pop(tab_id, None)

    def other_write(self, tab_id: int | None) -> None:
        """Any write that is not a key press ends the tab's run."""
        if tab_id is not None:
            self._runs.pop(tab_id, None)

    def forget(self, tab_id: int) -> None:
        """The tab closed or navigated."""
        self._runs.pop(tab_id, None)
