"""The pydantic model of a plugin manifest (imported only when a plugin is read)."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def manifest_model() -> Any:
    """The manifest's model: our fields checked, other plugin hosts' fields allowed and ignored."""
    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class Author(BaseModel):
        model_config = ConfigDict(extra="ignore")
        name: str = Field(default="", max_length=200)
        email: str | None = Field(default=None, max_length=320)
        url: str | None = Field(default=None, max_length=2048)

    class Additions(BaseModel):
        model_config = ConfigDict(extra="forbid")
        rules: list[dict[str, Any]] = Field(default_factory=list, max_length=500)
        guarded: list[str] = Field(default_factory=list, max_length=500)
        blocked: list[str] = Field(default_factory=list, max_length=500)

    class Manifest(BaseModel):
        model_config = ConfigDict(extra="ignore")
        name: str = Field(max_length=64)
        version: str | None = Field(default=None, max_length=64)
        description: str | None = Field(default=None, max_length=1024)
        author: str | Author | None = None
        homepage: str | None = Field(default=None, max_length=2048)
        skills: list[str] | None = Field(default=None, max_length=200)
        mcpServers: dict[str, Any] | str | None = None
        tabwarden: Additions | None = None

        @field_validator("homepage")
        @classmethod
        def _web_address(cls, value: str | None) -> str | None:
            if value and not value.startswith(("https://", "http://")):
                raise ValueError("must be an http:// or https:// address")
            return value

        @field_validator("skills", mode="before")
        @classmethod
        def _one_or_many(cls, value: Any) -> Any:
            return [value] if isinstance(value, str) else value  # Claude Code allows a single path

    return Manifest
