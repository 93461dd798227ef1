"""Agent Skills: reading skill folders and zips in the open SKILL.md format, safely."""
