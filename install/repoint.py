"""The warning when `install` moves a browser's registration from one installation to another.

A registration names one installation; registering another in its place is allowed (that is how
a user switches), but never silently: the warning says which installation the browser ran until
now and the command that puts it back.
"""

from __future__ import annotations

import json
from pathlib import Path

from install.installation import Installation, of_launcher
from install.layout import Placement


def previous_launcher(manifest: Path) -> Path | None:
    """The launcher an existing host manifest points at (None when there is no readable one)."""
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    path = doc.get("path") if isinstance(doc, dict) else None
    return Path(path) if isinstance(path, str) and path else None


def warning(where: Placement, manifest: Path, new: Installation) -> str | None:
    """The warning for writing `new` into `manifest`, or None when nothing changes hands (no
    registration yet, or one that already runs the same installation)."""
    old_launcher = previous_launcher(manifest)
    if old_launcher is None:
        return None
    old = of_launcher(old_launcher)
    if old is not None and old.id == new.id:
        return None
    subject = where.browser + (f" (profile {where.user_data_dir})" if where.user_data_dir else "")
    udd = str(where.user_data_dir) if where.user_data_dir else None
    if old is None:
        was = f"ran {old_launcher}, which is not a Tabwarden launcher (or is gone)"
        back = "there is no Tabwarden installation to go back to"
    elif old.is_present():
        was = f"ran the installation at {old.describe()}"
        back = f"to go back, run: {old.install_command(where.browser, udd)}"
    else:
        was = f"ran the installation at {old.describe()}, whose interpreter is gone"
        back = "that installation cannot be restored; reinstall it, then run its `tabwarden install`"
    # The command goes last, on a line of its own, so that it can be copied as it is.
    return (f"warning: the {subject} registration {was}; it now runs this installation at "
            f"{new.describe()}.\n  {back[0].upper()}{back[1:]}")
