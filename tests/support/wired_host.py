"""Test-only entry for the native host: the real host, with the browser-tool control methods
registered even where host/control does not register them itself yet. Used by the L1 tests'
launcher (see `browser_tools.wire_launcher`); harmless once the host wires them."""

import sys

import host.control.methods as methods

_builtin = methods.register_builtin


def _register_all(server):
    _builtin(server)
    if "tools.call" not in server.methods:
        from host.browser.control_methods import register

        register(server)


methods.register_builtin = _register_all

if __name__ == "__main__":
    from host.cli.main import main

    sys.exit(main(["host", *sys.argv[1:]]))
