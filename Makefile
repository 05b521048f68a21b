# Two commands do all set-up on a fresh machine:
#   make explore   bootstrap .venv-explore (the explorer and JupyterLab only) and open the
#                  explorer notebook in JupyterLab on 127.0.0.1
#   make test      bootstrap .venv with every extra, check formatting and types, run the suite,
#                  and run a fast subset against every declared minimum (make lower-bounds)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.placeborag-installed
PORT ?= 8888

# The explorer's own environment: the `notebook` extra (the explorer and JupyterLab), none of
# the test, conformance and docs tools. EXPLORE_EXTRAS=notebook,umap adds UMAP (numba).
EXPLORE_VENV := .venv-explore
EXPLORE_EXTRAS ?= notebook
EXPLORE_STAMP := $(EXPLORE_VENV)/.placeborag-installed

# The lower-bounds environment: Python 3.10 and every declared minimum, pinned by the
# constraints file. LOWER_PYTHON names another interpreter; it must be a 3.10.
LOWER_VENV := .venv-lower
LOWER_CONSTRAINTS := tests/constraints/lower-bounds.txt
LOWER_STAMP := $(LOWER_VENV)/.placeborag-installed
LOWER_PYTHON ?=
LOWER_TESTS := tests/test_every_module.py tests/explore/test_app.py
# The Haystack minimum in an environment of its own: haystack-ai 3.4 needs Python 3.11, so it
# cannot sit beside the 3.10 minimums above (a matrix of two environments).
LOWER_HAYSTACK_VENV := .venv-lower-haystack
LOWER_HAYSTACK_CONSTRAINTS := tests/constraints/lower-bounds-haystack.txt
LOWER_HAYSTACK_STAMP := $(LOWER_HAYSTACK_VENV)/.placeborag-installed
LOWER_HAYSTACK_PYTHON ?=
LOWER_HAYSTACK_TESTS := tests/integrations/test_haystack.py tests/integrations/test_haystack_suite.py

.PHONY: venv test explore bench docs browser lower-bounds lower-bounds-haystack clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall whenever pyproject.toml changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

$(EXPLORE_VENV)/bin/python:
	$(PYTHON) -m venv $(EXPLORE_VENV)

$(EXPLORE_STAMP): pyproject.toml | $(EXPLORE_VENV)/bin/python
	$(EXPLORE_VENV)/bin/python -m pip install --quiet -e '.[$(EXPLORE_EXTRAS)]'
	touch $(EXPLORE_STAMP)

# The first Python 3.10 found: LOWER_PYTHON, python3.10 on PATH, or a pyenv 3.10.
$(LOWER_VENV)/bin/python:
	@py="$(LOWER_PYTHON)"; \
	if [ -z "$$py" ]; then \
	  for c in python3.10 $$HOME/.pyenv/versions/3.10*/bin/python3.10; do \
	    if "$$c" -c 'import sys; assert sys.version_info[:2] == (3, 10)' 2>/dev/null; then \
	      py=$$c; break; fi; \
	  done; \
	fi; \
	if [ -z "$$py" ] || ! "$$py" -c 'import sys; assert sys.version_info[:2] == (3, 10)'; then \
	  echo "make lower-bounds: no Python 3.10 found (requires-python says >=3.10);" \
	    "name one with LOWER_PYTHON=/path/to/python3.10" >&2; exit 1; \
	fi; \
	echo "lower bounds: $$py -m venv $(LOWER_VENV)"; \
	"$$py" -m venv $(LOWER_VENV)

$(LOWER_STAMP): pyproject.toml $(LOWER_CONSTRAINTS) | $(LOWER_VENV)/bin/python
	$(LOWER_VENV)/bin/python -m pip install --quiet -c $(LOWER_CONSTRAINTS) \
	  -e '.[explore,langchain,llamaindex]' pytest hypothesis
	touch $(LOWER_STAMP)

# The first Python 3.11 found: LOWER_HAYSTACK_PYTHON, python3.11 on PATH, or a pyenv 3.11.
$(LOWER_HAYSTACK_VENV)/bin/python:
	@py="$(LOWER_HAYSTACK_PYTHON)"; \
	if [ -z "$$py" ]; then \
	  for c in python3.11 $$HOME/.pyenv/versions/3.11*/bin/python3.11; do \
	    if "$$c" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then \
	      py=$$c; break; fi; \
	  done; \
	fi; \
	if [ -z "$$py" ]; then \
	  echo "make lower-bounds: no Python 3.11 found for the Haystack minimum;" \
	    "name one with LOWER_HAYSTACK_PYTHON=/path/to/python3.11" >&2; exit 1; \
	fi; \
	"$$py" -m venv $(LOWER_HAYSTACK_VENV)
	$(LOWER_HAYSTACK_VENV)/bin/python -m pip install --quiet --upgrade pip

$(LOWER_HAYSTACK_STAMP): pyproject.toml $(LOWER_HAYSTACK_CONSTRAINTS) | $(LOWER_HAYSTACK_VENV)/bin/python
	$(LOWER_HAYSTACK_VENV)/bin/python -m pip install --quiet -c $(LOWER_HAYSTACK_CONSTRAINTS) \
	  -e '.[haystack]' pytest pytest-asyncio hypothesis
	touch $(LOWER_HAYSTACK_STAMP)

# The Haystack adapter against haystack-ai's declared minimum: its tests and Haystack's own
# document-store test classes. A skipped test fails the run.
lower-bounds-haystack: $(LOWER_HAYSTACK_STAMP)
	$(LOWER_HAYSTACK_VENV)/bin/python -m pip freeze --exclude-editable \
	  | grep -iE '^(numpy|haystack-ai|pytest|pytest-asyncio)=='
	@$(LOWER_HAYSTACK_VENV)/bin/python -m pytest -p no:cacheprovider -o addopts= -q -rs \
	  $(LOWER_HAYSTACK_TESTS) > $(LOWER_HAYSTACK_VENV)/pytest.log 2>&1; status=$$?; \
	  cat $(LOWER_HAYSTACK_VENV)/pytest.log; [ $$status = 0 ] || exit $$status; \
	  if grep -qE '[0-9]+ skipped' $(LOWER_HAYSTACK_VENV)/pytest.log; then \
	    echo "make lower-bounds-haystack: a test was skipped" >&2; exit 1; fi

# A fast subset of the suite against every declared minimum (Haystack's minimum needs Python
# 3.11: it runs in lower-bounds-haystack): every module imports, the explorer
# draws and redraws once, both adapters answer. pytest-asyncio is not installed there, so its
# ini keys are not checked. A skipped test fails the run: it would mean an extra is missing.
lower-bounds: $(LOWER_STAMP) lower-bounds-haystack
	$(LOWER_VENV)/bin/python -m pip freeze --exclude-editable \
	  | grep -iE '^(numpy|pandas|scikit-learn|plotly|ipywidgets|anywidget|langchain-core|llama-index-core|pytest)=='
	@$(LOWER_VENV)/bin/python -m pytest -p no:cacheprovider -o addopts= -q -rs -m 'not slow' -k 'not haystack' $(LOWER_TESTS) \
	  > $(LOWER_VENV)/pytest.log 2>&1; status=$$?; cat $(LOWER_VENV)/pytest.log; \
	  [ $$status = 0 ] || exit $$status; \
	  if grep -qE '[0-9]+ skipped' $(LOWER_VENV)/pytest.log; then \
	    echo "make lower-bounds: a test was skipped in $(LOWER_VENV)" >&2; exit 1; fi

# Debian's chromium for the Playwright browser test (Playwright cannot download its own here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Formatting and types are checked first: either failing fails `make test` (and CI). The
# explorer's JavaScript (placeborag/explore/_figures/js) is syntax-checked as the ES modules the
# widgets send, with the system's node when it is on PATH (tests/explore/test_figure_js.py).
test: venv browser
	$(BIN)/python -m ruff format --check placeborag tests benchmarks scripts examples
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest tests examples -p no:cacheprovider
	$(MAKE) lower-bounds

# JupyterLab prints the URL with its token: it opens the explorer notebook. Open it in a
# browser on this machine.
explore: $(EXPLORE_STAMP)
	$(EXPLORE_VENV)/bin/python -m jupyter lab --ip=127.0.0.1 --port=$(PORT) --no-browser \
	  $$([ "$$(id -u)" = 0 ] && echo --allow-root) \
	  --ServerApp.root_dir=$(CURDIR)/notebooks --LabApp.default_url=/lab/tree/explorer.ipynb

bench: venv
	$(BIN)/python benchmarks/run_all.py

docs: venv
	$(BIN)/python -m mkdocs build --strict

clean:
	rm -rf $(VENV) $(EXPLORE_VENV) $(LOWER_VENV) $(LOWER_HAYSTACK_VENV) build dist site .pytest_cache .hypothesis \
	  .mypy_cache
