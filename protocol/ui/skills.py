"""Skills and plugins (settings page): installing from a folder path or a `.zip` the page read,
listing, enabling, approving a changed copy, removing; and the state every page gets after a
change.

A plugin is installed in two steps, so that the user sees everything it adds before anything is
added: `plugins.review` stages the bundle and answers with what it would add
(`plugins.reviewed`); `plugins.install` installs exactly that staged copy (named by its id and
content hash). The host checks every file; the limits here only bound what a page may send.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.ui.common import Count, Epoch, Shape, SubmissionId, UiMessage

SkillName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
PluginName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
ContentHash = Annotated[str, msgspec.Meta(min_length=64, max_length=64, pattern=r"^[0-9a-f]{64}$")]
# A .zip the page read from a file the user picked, base64 (the host caps the archive itself).
ZIP_DATA_MAX = 16 * 1024 * 1024


class BundleSource(Shape, kw_only=True):
    """Where a skill or plugin comes from: a folder or `.zip` path on this computer, or the bytes
    of a `.zip` the user picked in the page (`zip_name` for messages only)."""

    path: Annotated[str, msgspec.Meta(min_length=1, max_length=4096)] | None = None
    zip_name: Annotated[str, msgspec.Meta(min_length=1, max_length=255)] | None = None
    zip_data: Annotated[str, msgspec.Meta(min_length=1, max_length=ZIP_DATA_MAX)] | None = None


# ---------------------------------------------------------------- skill ops (page → engine)


class SkillsList(UiMessage, tag="skills.list", kw_only=True):
    """Every installed skill and plugin (answered with `skills.state`)."""

    submission_id: SubmissionId


class SkillsInstall(UiMessage, tag="skills.install", kw_only=True):
    """Install one skill (a folder holding SKILL.md, or a .zip of one). A name already installed
    is refused (`skill_exists`) unless `replace`."""

    submission_id: SubmissionId
    source: BundleSource
    replace: bool = False


class SkillsSetEnabled(UiMessage, tag="skills.setEnabled", kw_only=True):
    submission_id: SubmissionId
    name: SkillName
    enabled: bool


class SkillsRemove(UiMessage, tag="skills.remove", kw_only=True):
    """Remove a skill the user installed (a plugin's skills leave with their plugin)."""

    submission_id: SubmissionId
    name: SkillName


class SkillsApprove(UiMessage, tag="skills.approve", kw_only=True):
    """Use a skill whose files changed on disk again: pins `content_hash`, which must be the hash
    the page showed (the files as they are now)."""

    submission_id: SubmissionId
    name: SkillName
    content_hash: ContentHash


class SkillsGet(UiMessage, tag="skills.get", kw_only=True):
    """One skill's instructions and files (answered with `skills.detail`)."""

    submission_id: SubmissionId
    name: SkillName


# ---------------------------------------------------------------- plugin ops (page → engine)


class PluginsReview(UiMessage, tag="plugins.review", kw_only=True):
    """Stage a plugin and say what it would add (answered with `plugins.reviewed`); adds nothing."""

    submission_id: SubmissionId
    source: BundleSource


class PluginsInstall(UiMessage, tag="plugins.install", kw_only=True):
    """Install the plugin `plugins.review` staged, exactly as reviewed."""

    submission_id: SubmissionId
    review_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    content_hash: ContentHash


class PluginsRemove(UiMessage, tag="plugins.remove", kw_only=True):
    """Uninstall a plugin: every skill, server, rule and list entry it added, nothing else."""

    submission_id: SubmissionId
    name: PluginName


class PluginsSetServerEnabled(UiMessage, tag="plugins.setServerEnabled", kw_only=True):
    """Start (or stop) one MCP server a plugin brought; they start only once enabled."""

    submission_id: SubmissionId
    name: PluginName
    server: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    enabled: bool


class PluginsApprove(UiMessage, tag="plugins.approve", kw_only=True):
    """Use a plugin whose files changed on disk again, pinning the hash the page showed."""

    submission_id: SubmissionId
    name: PluginName
    content_hash: ContentHash


# ---------------------------------------------------------------- state (engine → page)


class SkillEntry(Shape, kw_only=True):
    name: str
    description: str
    enabled: bool
    # ok: in use; changed: its files differ from the approved copy (not used until approved);
    # broken: its copy cannot be read (missing, a symlink appeared...), see `problem`.
    status: Literal["ok", "changed", "broken"]
    content_hash: str  # the approved (pinned) hash
    current_hash: str | None = None  # when changed: the hash of the files as they are now
    changed_files: list[str] = []
    problem: str | None = None
    plugin: str | None = None  # the plugin it came with
    source: str = ""  # where it was installed from
    files: Count = 0
    size: Count = 0
    has_scripts: bool = False  # never run by Tabwarden
    listed: bool = False  # named in the model's instructions now (false: off, changed, or cut by the budget)
    installed_at: Epoch = 0
    updated_at: Epoch = 0


class PluginServer(Shape, kw_only=True):
    id: str
    url: str
    enabled: bool


class PluginRuleEntry(Shape, kw_only=True):
    tool: str
    origin: str
    verdict: Literal["ask", "deny"]


class PluginEntry(Shape, kw_only=True):
    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    homepage: str = ""
    status: Literal["ok", "changed", "broken"] = "ok"
    content_hash: str
    current_hash: str | None = None
    problem: str | None = None
    skills: list[str] = []
    servers: list[PluginServer] = []
    rules: list[PluginRuleEntry] = []
    guarded: list[str] = []
    blocked: list[str] = []
    source: str = ""
    installed_at: Epoch = 0


class SkillsState(UiMessage, tag="skills.state", kw_only=True):
    """The answer to `skills.list`, and sent to every page after any change to skills or plugins.
    `prompt_chars` is what the listing adds to the model's instructions, within `prompt_budget`."""

    submission_id: SubmissionId | None = None
    skills: list[SkillEntry] = []
    plugins: list[PluginEntry] = []
    prompt_chars: Count = 0
    prompt_budget: Count = 0
    unlisted: Count = 0


class SkillFile(Shape, kw_only=True):
    path: str
    size: Count


class SkillDetail(UiMessage, tag="skills.detail", kw_only=True):
    submission_id: SubmissionId
    name: str
    description: str
    body: str
    content_hash: str
    files: list[SkillFile] = []


class ReviewedSkill(Shape, kw_only=True):
    name: str
    description: str
    has_scripts: bool = False


class PluginReviewed(UiMessage, tag="plugins.reviewed", kw_only=True):
    """What installing the staged plugin would add, all of it: its skills, its MCP servers (off
    until enabled), its rules (ask or deny only) and its additions to the guarded and blocked
    lists. `plugins.install` with `review_id` and `content_hash` installs exactly this."""

    submission_id: SubmissionId
    review_id: str
    content_hash: str
    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    homepage: str = ""
    skills: list[ReviewedSkill] = []
    servers: list[PluginServer] = []
    rules: list[PluginRuleEntry] = []
    guarded: list[str] = []
    blocked: list[str] = []
    replaces: str | None = None  # the version installed now, when this is an update
