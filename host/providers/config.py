"""Provider and engine settings the user writes: `<config dir>/engine.json`.

    {
      "defaultProvider": "work",
      "approvalTimeoutSeconds": 300,
      "userDetails": ["Ana Lima", "ana.lima@example.org", "+351 912 345 678", "PT50 0002 0123 1234 5678 9015 4",
                      "https://www.mybank.example"],
      "providers": {
        "work":  {"kind": "openai", "baseUrl": "https://api.openai.com/v1", "model": "gpt-4.1-mini"},
        "local": {"kind": "openai", "baseUrl": "http://127.0.0.1:8080/v1", "model": "qwen3", "headers": {"X-Team": "a"}},
        "claude": {"kind": "anthropic", "baseUrl": "https://api.anthropic.com", "model": "claude-sonnet-4-5",
                   "apiKeyEnv": "ANTHROPIC_API_KEY"},
        "vision": {"kind": "openai", "baseUrl": "http://127.0.0.1:8000/v1", "model": "qwen2.5-vl", "images": true},
        "voice": {"kind": "openai", "baseUrl": "https://api.openai.com/v1", "model": "gpt-audio", "audio": true}
      }
    }

API keys are not written here: `tabwarden` stores them in the OS keyring or a 0600 file (see
`secrets.py`) under the provider's name, or `apiKeyEnv` names an environment variable.
Validated with pydantic (imported only when the engine first needs a provider).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from host.config_files import ConfigFileError

CONFIG_NAME = "engine.json"
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")
_PROVIDER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# OpenAI's models that refuse image input.
_OPENAI_TEXT_ONLY = ("gpt-3.5", "o1-mini", "o3-mini", "gpt-4-0", "gpt-4-32k")


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class ProviderConfig(_Model):
    """One model connection."""

    kind: Literal["openai", "anthropic"]
    base_url: str
    model: str = Field(min_length=1, max_length=256)
    headers: dict[str, str] = {}
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
    max_tokens: int = Field(default=4096, ge=1, le=200_000)
    timeout_seconds: float = Field(default=120.0, gt=0, le=900)
    max_retries: int = Field(default=2, ge=0, le=5)
    # Whether the model takes images (tool results' screenshots and MCP images). Unset: yes for
    # Anthropic and api.openai.com (but its text-only models), no for other OpenAI-compatible
    # servers, many of which refuse them.
    images: bool | None = None
    # Whether the model takes audio (MCP tools' WAV and MP3 clips), which only OpenAI's audio
    # models do among the kinds here. Unset: yes for OpenAI models named for audio on
    # api.openai.com, else no (the clip is played to the user and the model told so).
    audio: bool | None = None

    def accepts_audio(self) -> bool:
        """Whether tool results' audio is sent to this model (`audio`, else the known default)."""
        if self.audio is not None:
            return self.audio and self.kind == "openai"
        import httpx

        return self.kind == "openai" and httpx.URL(self.base_url).host == "api.openai.com" and "audio" in self.model

    def accepts_images(self) -> bool:
        """Whether images are sent to this model (`images`, else the kind's known default)."""
        if self.images is not None:
            return self.images
        if self.kind == "anthropic":
            return True
        import httpx

        return httpx.URL(self.base_url).host == "api.openai.com" and not self.model.startswith(_OPENAI_TEXT_ONLY)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        import httpx

        try:
            url = httpx.URL(value)
        except Exception as exc:  # httpx raises several types for malformed URLs
            raise ValueError(f"not a URL: {exc}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError("must be an http:// or https:// URL with a host")
        return value.rstrip("/")

    @field_validator("headers")
    @classmethod
    def _header_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not _HEADER_NAME.match(name):
                raise ValueError(f"invalid header name {name!r}")
            if any(ch in text for ch in "\r\n\x00"):
                raise ValueError(f"header {name!r} contains a line break")
        return value


class EngineConfig(_Model):
    """Everything in engine.json."""

    providers: dict[str, ProviderConfig] = {}
    default_provider: str | None = None
    approval_timeout_seconds: float = Field(default=300.0, gt=0, le=86_400)
    # Tokens (input + output) one turn may use before it pauses as `budget_pause`; None: no cap.
    turn_token_budget: int | None = Field(default=None, ge=1)
    # The user's own details (name, e-mail addresses, phone, postal address, their accounts and
    # the sites of those accounts), one per entry: the user's words in every task.
    user_details: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(default_factory=list,
                                                                                     max_length=50)

    @field_validator("providers")
    @classmethod
    def _names(cls, value: dict[str, ProviderConfig]) -> dict[str, ProviderConfig]:
        for name in value:
            if not _PROVIDER_NAME.match(name):
                raise ValueError(f"provider name {name!r} must be 1-64 of A-Z a-z 0-9 _ . -")
        return value

    def provider(self, name: str | None = None) -> tuple[str, ProviderConfig] | None:
        """The named provider, else the default one, else the only one; None if there is none."""
        if name is not None:
            found = self.providers.get(name)
            return (name, found) if found is not None else None
        if self.default_provider is not None and self.default_provider in self.providers:
            return self.default_provider, self.providers[self.default_provider]
        if len(self.providers) == 1:
            return next(iter(self.providers.items()))
        return None


def valid_name(name: str) -> bool:
    """Whether `name` can name a provider (1-64 of A-Z a-z 0-9 _ . -)."""
    return bool(_PROVIDER_NAME.match(name))


def _problems(exc: ValidationError) -> list[tuple[str, str]]:
    out = []
    for error in exc.errors():
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        out.append((path, error["msg"]))
    return out


def parse_config(data: Any, source: str = "engine settings") -> EngineConfig:
    """Validate decoded JSON as engine settings; raises ConfigFileError naming each bad field."""
    try:
        config = EngineConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigFileError(source, _problems(exc)) from None
    if config.default_provider is not None and config.default_provider not in config.providers:
        raise ConfigFileError(source, [("$.defaultProvider", f"no provider named {config.default_provider!r}")])
    return config


def config_path() -> Path:
    """`<config dir>/engine.json`."""
    from host.paths import dirs

    return dirs().config / CONFIG_NAME


def load_config(path: Path | None = None) -> EngineConfig:
    """Read the settings file; a missing file means defaults (no providers)."""
    path = path or config_path()
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return EngineConfig()
    except OSError as exc:
        raise ConfigFileError(str(path), [("$", f"cannot read: {exc}")]) from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(str(path), [("$", f"not JSON: {exc}")]) from None
    return parse_config(data, str(path))


def save_config(config: EngineConfig, path: Path | None = None) -> Path:
    """Write the settings file atomically (0600: it may name internal endpoints)."""
    import os

    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = json.dumps(config.model_dump(by_alias=True, exclude_defaults=True), indent=2, sort_keys=True) + "\n"
    temp = path.with_suffix(".tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temp, path)
    return path
