# Two entry points: `make demo` and `make test`. Both build .venv in the repo and reuse it
# while pyproject.toml is unchanged.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.graph-agent-installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LANGSMITH_TRACING := false
export LANGSMITH_TEST_TRACKING := false
export LANGGRAPH_CLI_NO_ANALYTICS := 1

.PHONY: install models demo test lint bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check torch==2.13.0
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $@

install: $(STAMP)

models: $(STAMP)
	$(BIN)/graph-agent models install --pack default

demo: models
	$(BIN)/python -m graph_agent.demo

# The optional Tesseract pack (4 MB) too, so its reader is tested on real weights.
test: models
	$(BIN)/graph-agent models install --pack tesseract
	$(BIN)/python -m pytest -q -p no:cacheprovider

# Every benchmark, one table; JSON and a plot in evals/results/ (BENCH_ARGS=--full adds 1M cards).
bench: models
	$(BIN)/python -m graph_agent.evals.bench_suite $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build *.egg-info
