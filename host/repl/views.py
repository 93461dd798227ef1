"""Host answers that print themselves for people at the REPL prompt, while keeping the data:
`v.data` is the JSON as received, `v["key"]`, `v.key` and `v.snake_key` (for `camelKey`) read it."""

from __future__ import annotations

from typing import Any, Callable

from host.repl.style import Style

Renderer = Callable[[Any, Style], str]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class View:
    """Data plus the way to show it."""

    __slots__ = ("data", "_render", "_style")

    def __init__(self, data: Any, render: Renderer, style: Style):
        self.data = data
        self._render = render
        self._style = style

    def __repr__(self) -> str:
        return self._render(self.data, self._style)

    def __getitem__(self, key: Any) -> Any:
        return self.data[key]

    def __getattr__(self, name: str) -> Any:
        data = object.__getattribute__(self, "data")
        if isinstance(data, dict):
            for key in (name, _camel(name)):
                if key in data:
                    return data[key]
        raise AttributeError(f"{type(data).__name__} has no field {name!r}")

    def __iter__(self):
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __eq__(self, other: object) -> bool:
        return self.data == (other.data if isinstance(other, View) else other)

    __hash__ = None  # type: ignore[assignment]

    def __dir__(self) -> list[str]:
        keys = list(self.data) if isinstance(self.data, dict) else []
        return sorted({*keys, "data"})


class Text:
    """A block of text that shows itself as is (help, notices)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text
