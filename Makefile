# ssdlab: make help lists the targets.

.DEFAULT_GOAL := help
.PHONY: help install develop tools test test-slow lint run fidelity bench bench-scaling bench-serve bench-pts

VENV   ?= .venv
PYTHON ?= python3
PY     := $(VENV)/bin/python

help: ## Show the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

$(PY):
	$(PYTHON) -m venv $(VENV)

install: $(PY) ## Create .venv if missing, install the Python deps and build the extension (release)
	$(PY) -m pip install --quiet "maturin>=1.5,<2"
	$(VENV)/bin/maturin develop --release --extras test

develop: $(PY) ## Rebuild the extension only (release), after editing crates/
	$(VENV)/bin/maturin develop --release --skip-install

tools: $(PY) ## System tools the tests need (fio, blktrace, Chromium, Playwright), installed when missing
	bash scripts/install-test-tools.sh $(PY)

test: install tools ## Set up, then every test: Rust (release) and pytest (one worker per CPU, a file per worker); slow tests are opt-in: make test-slow
	cargo test --workspace --release
	$(PY) -m pytest -n logical --dist loadfile

test-slow: ## The slow pytest tests (full-size drives)
	$(PY) -m pytest -m slow

lint: ## cargo clippy and cargo fmt --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo fmt --all -- --check

run: install ## Set up, then the consistency test on the default 256 GB drive into runs/default
	$(VENV)/bin/ssdlab consistency --out runs/default --report

fidelity: install ## The fidelity scorecard: every preset's seed procedures at 256 GB; writes docs/calibration.md's table
	$(VENV)/bin/ssdlab calibrate --out runs/fidelity --doc docs/calibration.md

bench: ## End-to-end benchmark: the full-size consistency scenario, 3 runs (wall s, peak RSS, rates)
	cargo run --release -p ssdlab --example bench_consistency -- --runs 3

bench-scaling: ## The README's scaling table: 32 / 128 / 256 / 1024 GB, median of 3 runs each
	@cargo build --release -q -p ssdlab --example bench_consistency
	@echo "| capacity | wall s | peak RSS | host IOs / wall s | NAND page ops / wall s |"
	@echo "|---|---|---|---|---|"
	@for gb in 32 128 256 1024; do ./target/release/examples/bench_consistency --capacity-gb $$gb --runs 3 --row; done

bench-serve: install ## ssdlab serve beside nbdkit: 4 KiB QD32 IOPS (virtual clock), real-clock latency, transport cost, memory
	$(PY) scripts/bench_serve.py

bench-pts: ## PTS speed: the full PTS-E IOPS, throughput and latency tests, then pts all, on the default 256 GB drive (wall and CPU s each, load average)
	@for t in iops throughput latency all; do rm -rf runs/bench-pts-$$t; echo "load before pts $$t: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  /usr/bin/env time -f "pts $$t: %e s wall, %U s user + %S s sys CPU, %M KB peak RSS" $(VENV)/bin/ssdlab pts $$t -q --out runs/bench-pts-$$t; done
	@python3 -c "import json; s = json.load(open('runs/bench-pts-all/summary.json')); [print(f\"  {t['test']:<10} {t['wall_seconds']:>7.1f} s wall\") for t in s['tests']]"
