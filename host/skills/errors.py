"""Why a skill (a folder or zip with a SKILL.md) cannot be used, with a stable code and the file or
field inside the skill the problem is about."""

from __future__ import annotations

from protocol.errors import TabwardenError

NOT_A_SKILL = "not_a_skill"  # no SKILL.md where one is expected
MISSING_FRONT_MATTER = "missing_front_matter"  # SKILL.md does not open, or close, its `---` block
INVALID_FRONT_MATTER = "invalid_front_matter"  # bad YAML, not a mapping, a field of the wrong type or length
INVALID_NAME = "invalid_name"
BODY_TOO_LARGE = "body_too_large"
UNSAFE_PATH = "unsafe_path"  # `..`, an absolute path, a drive letter, a backslash, a control character
SYMLINK = "symlink"  # a symlink in a folder or in a zip
ARCHIVE_TOO_LARGE = "archive_too_large"  # the files together are over the cap, or a zip member is a bomb
TOO_MANY_FILES = "too_many_files"
FILE_TOO_LARGE = "file_too_large"
NOT_TEXT = "not_text"  # not UTF-8, or holds NUL bytes
NOT_FOUND = "not_found"  # a resource that does not exist
NOT_A_RESOURCE = "not_a_resource"  # a path outside references/ and assets/
BAD_ARCHIVE = "bad_archive"  # not a zip, corrupt, encrypted, or an unusable layout
# Used by the library and sources modules around this core.
UNREADABLE_SOURCE = "unreadable_source"  # the folder or zip to install from cannot be read
SKILL_NOT_FOUND = "skill_not_found"  # no installed skill of that name
SKILL_EXISTS = "skill_exists"  # a skill of that name is installed already
SKILL_OF_PLUGIN = "skill_of_plugin"  # the skill came with a plugin and is managed through it
HASH_MISMATCH = "hash_mismatch"  # an installed copy's files no longer match its pin


class SkillError(TabwardenError, ValueError):
    """A skill, or one of its files, that cannot be used. `code` is one of the constants above;
    `where` names the file (`references/api.md`) or field (`SKILL.md:description`) at fault."""

    def __init__(self, code: str, message: str, where: str | None = None):
        super().__init__(f"{where}: {message}" if where else message)
        self.code = code
        self.message = message
        self.where = where

    def wire(self) -> dict:
        """The error as a JSON-ready object for pages, the REPL and tool results."""
        return {"code": self.code, "message": self.message, "where": self.where}
