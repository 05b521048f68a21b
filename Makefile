# Two commands do all set-up on a fresh machine:
#   make explore   bootstrap .venv and open the explorer in JupyterLab on 127.0.0.1
#   make test      bootstrap .venv with every extra, check formatting and types, run the suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.placeborag-installed
PORT ?= 8888

.PHONY: venv test explore bench docs browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall whenever pyproject.toml changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# Debian's chromium for the Playwright browser test (Playwright cannot download its own here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Formatting and types are checked first: either failing fails `make test` (and CI).
test: venv browser
	$(BIN)/python -m ruff format --check placeborag tests benchmarks scripts examples
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest tests examples -p no:cacheprovider

# JupyterLab prints the URL with its token; open it in a browser on this machine.
explore: venv
	$(BIN)/python -m jupyter lab --ip=127.0.0.1 --port=$(PORT) --no-browser \
	  $$([ "$$(id -u)" = 0 ] && echo --allow-root) \
	  --ServerApp.root_dir=$(CURDIR)/notebooks $(CURDIR)/notebooks/explorer.ipynb

bench: venv
	$(BIN)/python benchmarks/run_all.py

docs: venv
	$(BIN)/python -m mkdocs build --strict

clean:
	rm -rf $(VENV) build dist site .pytest_cache .hypothesis .mypy_cache
