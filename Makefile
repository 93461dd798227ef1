# Two commands on a fresh machine: `make launch` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: all venv chromium test test-fast wheel-check launch bench generate clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# Debian's Chromium for the real-browser tests, when it is missing and apt is usable.
chromium:
	@if command -v chromium >/dev/null 2>&1 || [ -x /usr/lib/chromium/chromium ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "Installing Debian's chromium (needed by the real-browser tests)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "chromium not found and apt is not usable: real-browser tests will be skipped unless required"; fi

test: venv chromium
	$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

test-fast: venv
	$(PY) -m pytest -q -p no:cacheprovider -m 'not browser' $(PYTEST_ARGS)

# The built wheel, installed outside the checkout, runs install, doctor and the demo.
wheel-check: venv chromium
	PY=$(PY) .ci/wheel-check

launch: venv chromium
	$(PY) -m host launch $(LAUNCH_ARGS)

bench: venv chromium
	$(PY) -m bench

generate: venv
	$(PY) -m protocol.generate
	$(PY) -m host.tools.generate

clean:
	rm -rf $(VENV) .pytest_cache test-output
