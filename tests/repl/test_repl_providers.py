"""Removing a model provider from the REPL (`tw.remove_provider`), against a real host: the
entry and its stored key go, the default is accounted for, and an unknown name is the host's
structured error with nothing changed."""

from __future__ import annotations


def _names(tw_console) -> list[str]:
    return sorted(tw_console.call("engine.configure")["providers"])


def test_remove_provider_takes_the_default_and_says_what_is_left(tw_console):
    for name in ("work", "home", "spare"):
        tw_console.call("engine.set_provider", name=name, kind="openai", base_url="http://127.0.0.1:9/v1",
                        model="m-1", api_key=f"sk-{name}", default=name == "work")
    out = tw_console("tw.remove_provider('work')")
    assert ("Removed provider 'work' and its stored API key. It was the default provider: no provider is the "
            "default now; choose one of home, spare as the default before the next task.") in out
    status = tw_console.call("engine.configure")
    assert status["providers"] == ["home", "spare"] and status["defaultProvider"] is None

    out = tw_console("tw.remove_provider('nobody')")
    assert ("error not_found: there is no provider named 'nobody' (providers: home, spare) - at `$.name`  "
            "{'reason': 'provider_not_found'}") in out
    assert _names(tw_console) == ["home", "spare"]
    tw_console("tw.remove_provider('home')", "tw.remove_provider('spare')")
    assert _names(tw_console) == []
