# Two commands do all the set-up: `make study` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.themesim-installed
CORES ?= 8

.PHONY: install browser fonts study test test-slow lint clean

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

# llama.cpp's own server, the LLM judge's default local server (prompt cache), built once from
# the llama.cpp source that the pinned llama-cpp-python vendors (its sdist from PyPI): the same
# portable CPU build, static so the binary stands alone, without the web UI (which would be
# downloaded). The build is kept per pin in LLAMA_CACHE, so a new clone (CI) copies it instead
# of compiling again (about 5 minutes on 2 cores), as pip's cache keeps the Python wheel.
LLAMA_PIN := $(shell sed -n 's/^llama_cpp_python==//p' requirements/constraints.txt)
LLAMA_CACHE ?= $(HOME)/.cache/themesim/llama.cpp
LLAMA_BUILT := $(LLAMA_CACHE)/$(LLAMA_PIN)/llama-server
LLAMA_DIR := $(VENV)/llama.cpp
LLAMA_SERVER := $(LLAMA_DIR)/bin/llama-server
LLAMA_PIN_FILE := $(LLAMA_DIR)/pin-$(LLAMA_PIN)
LLAMA_WORK := $(LLAMA_CACHE)/$(LLAMA_PIN)/work
LLAMA_SRC := $(LLAMA_WORK)/llama_cpp_python-$(LLAMA_PIN)/vendor/llama.cpp

$(LLAMA_PIN_FILE):
	mkdir -p $(LLAMA_DIR) && rm -f $(LLAMA_DIR)/pin-* && touch $@

$(LLAMA_BUILT): | $(STAMP)
	rm -rf $(LLAMA_WORK)
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: \
		llama-cpp-python==$(LLAMA_PIN) -d $(LLAMA_WORK)
	tar -xzf $(LLAMA_WORK)/llama_cpp_python-$(LLAMA_PIN).tar.gz -C $(LLAMA_WORK)
	cmake -S $(LLAMA_SRC) -B $(LLAMA_WORK)/build -DCMAKE_BUILD_TYPE=Release \
		-DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
		-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
		-DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF
	cmake --build $(LLAMA_WORK)/build --target llama-server -j 2
	install -D -m 755 $(LLAMA_WORK)/build/bin/llama-server $@.tmp && mv $@.tmp $@
	rm -rf $(LLAMA_WORK)

$(LLAMA_SERVER): $(LLAMA_PIN_FILE) $(LLAMA_BUILT)
	install -D -m 755 $(LLAMA_BUILT) $@

install: $(STAMP) $(LLAMA_SERVER)

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
	$(BIN)/ruff check src tests scripts bench
	$(BIN)/ruff format --check src tests scripts bench
	$(BIN)/snakefmt --check Snakefile workflow/rules

# The tests marked slow (the packaged LLM generating themes, paraphrases and rated pairs) run
# in test-slow; the judge's real-server pipeline tests stay in test. Two workers, one test
# file each at a time (a file's fixtures are its own): 13 min of tests on 2 cores, not 19.
# A test that hangs fails after TEST_TIMEOUT seconds with every thread's stack, instead of
# holding the whole run (its module fixtures count into its first test's time).
TEST_WORKERS ?= 2
TEST_TIMEOUT ?= 900
test: lint
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -m "not slow" -n $(TEST_WORKERS) --dist loadfile \
		--timeout $(TEST_TIMEOUT)

test-slow: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -m slow

clean:
	rm -rf results logs .snakemake
