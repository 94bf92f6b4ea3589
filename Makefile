# The documented entry points: setup, demo, test, bench, lint.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
DEMO := demo-out

.PHONY: setup demo demo-harness test bench lint clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required (found %d.%d)" % sys.version_info[:2])'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

# The site with demo data: migrate, a real worker, three verified baseline runs on a
# synthetic release with SYNTHETIC prices, served at http://127.0.0.1:8000.
demo: setup
	bash scripts/demo.sh

# The harness alone, end to end, as in the seed: nine cells, a receipt, verify.
demo-harness: setup
	rm -rf $(DEMO)
	$(BIN)/pit-harness release synth --out $(DEMO)/release --start 2023-03-01 --end 2023-03-31 --seed 7 --rows 40000 --acceptance-fraction 0.05
	$(BIN)/pit-harness prices synth --bundle $(DEMO)/release --out $(DEMO)/prices-SYNTHETIC.csv --end 2023-04-28 --seed 7
	cp examples/run.json $(DEMO)/run.json
	$(BIN)/pit-harness run --config $(DEMO)/run.json
	$(BIN)/pit-harness verify $(DEMO)/out/receipt.json --trajectory $(DEMO)/out/trajectory.jsonl --bundle $(DEMO)/release

test: setup
	$(BIN)/pytest -q

bench: setup
	$(BIN)/python benchmarks/run.py

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy harness
	$(BIN)/python manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) $(DEMO) bench-out
