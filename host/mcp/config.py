"""The MCP servers the user configured: `<config dir>/mcp.json`.

    {
      "servers": {
        "github": {"url": "https://mcp.example.com/mcp", "bearerTokenEnv": "GITHUB_MCP_TOKEN",
                   "tools": ["search_issues", "get_issue"]},
        "local":  {"url": "http://127.0.0.1:8931/mcp", "headers": {"X-Team": "a"}, "timeoutSeconds": 30},
        "browser": {"url": "http://127.0.0.1:8932/mcp", "navigates": {"browser_navigate": "url", "open_page": "href"}}
      }
    }

`navigates` names the tools that load a page in a browser the server drives, and the argument
that holds the page's address: such a call is judged as a navigation to that address too
(blocked list, `navigate` rules, scope lock), so a blocked site is refused before the server
sees it. Unset, Playwright MCP's tools are known (`DEFAULT_NAVIGATES`); `{}` turns that off.

Bearer tokens are never written here: they live in the key store under `mcp:<id>:bearer`
(see auth.py), or `bearerTokenEnv` names an environment variable. Validated with pydantic,
imported only when a file exists; a file that fails validation is refused whole.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from host.config_files import ConfigFileError

CONFIG_NAME = "mcp.json"
MAX_FILE_BYTES = 1024 * 1024
SERVER_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")
# Playwright MCP's tools that load an address given as an argument (browser_tabs: its action "new").
DEFAULT_NAVIGATES: dict[str, str] = {"browser_navigate": "url", "browser_tabs": "url"}
# Credentials belong in the key store, not in a JSON file that gets copied around.
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def server_id_problem(server_id: str) -> str | None:
    """Why `server_id` cannot name a server (None when it can). Tool names are
    `mcp__<id>__<tool>` and are split at the first `__`, so the id may hold neither `__` nor a
    trailing `_`."""
    if not SERVER_ID.match(server_id):
        return "must be 1-32 of A-Z a-z 0-9 _ -"
    if "__" in server_id or server_id.endswith("_"):
        return "may not contain `__` or end with `_` (tool names are mcp__<id>__<tool>)"
    return None


@dataclass(frozen=True)
class ServerConfig:
    """One server, as validated (plain data: callers need no pydantic)."""

    id: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    bearer_token_env: str | None = None
    enabled: bool = True
    timeout_seconds: float = 60.0
    connect_timeout_seconds: float = 10.0
    tools: tuple[str, ...] | None = None  # the allow-list; None: every tool the server lists
    navigates: dict[str, str] | None = None  # tool -> its URL argument; None: DEFAULT_NAVIGATES
    # The server may ask the user questions (MCP elicitation, form mode) on the side panel: only
    # then is the capability declared to it.
    elicitation: bool = False
    # The server may ask for a model answer (MCP sampling), each request allowed on a card.
    sampling: bool = False

    def url_argument(self, tool: str) -> str | None:
        """The argument of `tool` that holds an address the server's browser will load, if any."""
        return (DEFAULT_NAVIGATES if self.navigates is None else self.navigates).get(tool)

    def fingerprint(self) -> str:
        """Equal for equal settings: a changed server is reconnected, an unchanged one kept."""
        return json.dumps([self.url, sorted(self.headers.items()), self.bearer_token_env, self.timeout_seconds,
                           self.connect_timeout_seconds, self.elicitation, self.sampling], sort_keys=True)


@dataclass(frozen=True)
class McpConfig:
    """Everything in mcp.json (no file: no servers)."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)


def _models():
    from pydantic import BaseModel, ConfigDict, Field, field_validator
    from pydantic.alias_generators import to_camel

    class _Model(BaseModel):
        model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    class ServerModel(_Model):
        url: str = Field(min_length=1, max_length=2048)
        headers: dict[str, str] = {}
        bearer_token_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
        enabled: bool = True
        timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
        connect_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
        tools: list[str] | None = Field(default=None, max_length=1000)
        navigates: dict[str, str] | None = Field(default=None, max_length=100)
        elicitation: bool = False
        sampling: bool = False

        @field_validator("url")
        @classmethod
        def _http_url(cls, value: str) -> str:
            from host.gatekeeper.origins import destination

            dest = destination(value)
            if not dest.valid or dest.scheme not in ("http", "https") or not dest.origin.host:
                raise ValueError("must be an http:// or https:// URL with a host")
            from ada_url import URL

            parsed = URL(dest.href)
            if parsed.username or parsed.password:
                raise ValueError("may not carry a user name or password (use the key store for tokens)")
            return dest.href

        @field_validator("headers")
        @classmethod
        def _headers(cls, value: dict[str, str]) -> dict[str, str]:
            for name, text in value.items():
                if not _HEADER_NAME.match(name):
                    raise ValueError(f"invalid header name {name!r}")
                if name.lower() in _SECRET_HEADERS:
                    raise ValueError(f"header {name!r} carries a credential: store the token with "
                                     "`mcp.set_token` (key store) or name it in bearerTokenEnv")
                if any(ch in text for ch in "\r\n\x00"):
                    raise ValueError(f"header {name!r} contains a line break")
            return value

        @field_validator("tools")
        @classmethod
        def _tool_names(cls, value: list[str] | None) -> list[str] | None:
            for name in value or ():
                if not name or len(name) > 128:
                    raise ValueError(f"tool name {name!r} must be 1-128 characters")
            return value

        @field_validator("navigates")
        @classmethod
        def _navigates(cls, value: dict[str, str] | None) -> dict[str, str] | None:
            for tool, argument in (value or {}).items():
                if not tool or len(tool) > 128 or not argument or len(argument) > 128:
                    raise ValueError(f"{tool!r}: {argument!r} must name a tool and its argument (1-128 characters)")
            return value

    class FileModel(_Model):
        servers: dict[str, ServerModel] = Field(default={}, max_length=64)

        @field_validator("servers")
        @classmethod
        def _ids(cls, value: dict[str, ServerModel]) -> dict[str, ServerModel]:
            for server_id in value:
                problem = server_id_problem(server_id)
                if problem is not None:
                    raise ValueError(f"server id {server_id!r} {problem}")
            return value

    return FileModel


def parse_mcp_config(data: Any, source: str = "MCP settings") -> McpConfig:
    """Validate decoded JSON as MCP settings; raises ConfigFileError naming each bad field."""
    from pydantic import ValidationError

    try:
        model = _models().model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            # pydantic prefixes a validator's own words with "Value error, "; the words are enough.
            problems.append((path, error["msg"].removeprefix("Value error, ")))
        raise ConfigFileError(source, problems) from None
    servers = {
        server_id: ServerConfig(id=server_id, url=s.url, headers=dict(s.headers), bearer_token_env=s.bearer_token_env,
                                enabled=s.enabled, timeout_seconds=s.timeout_seconds,
                                connect_timeout_seconds=s.connect_timeout_seconds,
                                tools=tuple(s.tools) if s.tools is not None else None,
                                navigates=dict(s.navigates) if s.navigates is not None else None,
                                elicitation=s.elicitation, sampling=s.sampling)
        for server_id, s in model.servers.items()
    }
    return McpConfig(servers)


def config_path() -> Path:
    """`<config dir>/mcp.json` (see host.paths)."""
    from host.paths import dirs

    return dirs().config / CONFIG_NAME


def load_mcp_config(path: Path | None = None) -> McpConfig:
    """Read the settings file; a missing file means no servers (and pydantic stays unimported)."""
    path = path or config_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return McpConfig()
    except OSError as exc:
        raise ConfigFileError(str(path), [("$", f"cannot read: {exc.strerror}")]) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigFileError(str(path), [("$", f"the file is larger than {MAX_FILE_BYTES} bytes")])
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigFileError(str(path), [("$", f"not valid JSON: {exc}")]) from None
    return parse_mcp_config(data, str(path))
