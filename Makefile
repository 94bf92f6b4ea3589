# The documented entry points: setup, demo, test, bench, lint.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
DEMO := demo-out
# a developer's machine: the site's DEBUG is off unless asked for (production sets a key)
export DJANGO_DEBUG ?= true

.PHONY: setup demo demo-harness test test-fast bench lint lock schema evaluators clean

setup: $(VENV)/.installed node_modules/.installed

# axe-core for the browser tests' accessibility check, from its lock. Without npm the
# setup goes on (those tests fail, saying why, when CI=true).
node_modules/.installed: package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  echo "setup: axe-core for the browser tests' accessibility check (npm ci, pinned)"; \
	  npm ci --no-audit --no-fund --loglevel=error && touch $@; \
	else \
	  echo "npm not found: skipping axe-core (the browser tests' accessibility check needs it)"; \
	fi

# The site and the development tools (the harness alone needs any Python >= 3.11: `pip
# install .`; the site is pinned to 3.11 here).
$(VENV)/.installed: requirements/dev.lock requirements/site.lock requirements/compose-spec.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required for the site (found %d.%d)" % sys.version_info[:2])'
	@echo "setup 1/5: a virtual environment in $(VENV)"
	$(PYTHON) -m venv $(VENV)
	@echo "setup 2/5: the site's and the tools' packages from requirements/dev.lock, hashes checked (the longest step: a few minutes)"
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes -r requirements/dev.lock
	@echo "setup 3/5: pitweb itself, editable"
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	# the harness's own wheels, for the test that installs it alone with no network
	@echo "setup 4/5: wheels kept in .wheels for the offline install tests (harness, runtime image)"
	$(BIN)/pip download --quiet --disable-pip-version-check --require-hashes --only-binary=:all: \
	  -r requirements/harness.lock -d .wheels
	# the runtime image's wheels (site.lock), for the test that rebuilds its runtime offline
	$(BIN)/pip download --quiet --disable-pip-version-check --require-hashes --only-binary=:all: \
	  -r requirements/site.lock -d .wheels
	# the Compose Specification's schema, for the test that validates docker-compose.yml
	@echo "setup 5/5: the Compose Specification's schema, for the docker-compose.yml test"
	$(BIN)/pip download --quiet --disable-pip-version-check --require-hashes --no-deps \
	  -r requirements/compose-spec.lock -d .wheels/spec
	@touch $@
	@echo "setup: done ($(VENV) ready)"

# Hashed locks per set, from pyproject.toml: the harness, the harness with Inspect, the site
# (+ harness), dev (+ site and Inspect).
lock: setup
	$(BIN)/uv pip compile pyproject.toml --python-version 3.11 --generate-hashes -q -o requirements/harness.lock
	$(BIN)/uv pip compile pyproject.toml --extra site --python-version 3.11 --generate-hashes -q -o requirements/site.lock
	$(BIN)/uv pip compile pyproject.toml --extra inspect --python-version 3.11 --generate-hashes -q -o requirements/inspect.lock
	$(BIN)/uv pip compile pyproject.toml --extra site --extra dev --extra inspect --python-version 3.11 --generate-hashes -q -o requirements/dev.lock

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
	$(BIN)/pit-harness verify $(DEMO)/out/receipt.json --trajectory $(DEMO)/out/trajectory.jsonl --bundle $(DEMO)/release --prices $(DEMO)/prices-SYNTHETIC.csv

test: setup
	$(BIN)/pytest -q

# The unit tests of both parts, without the tests marked slow (tests/conftest.py says which).
test-fast: setup
	$(BIN)/pytest -q -m "not slow"

# Inspect, promptfoo and lm-eval reading the export, each installed afresh in .tools/ from
# its own lock (needs the network; CI runs it).
evaluators: setup
	bash scripts/evaluators.sh

bench: setup
	$(BIN)/python benchmarks/run.py

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/ruff check --target-version py313 harness
	# the code stays readable: no function anywhere over McCabe complexity 12
	$(BIN)/ruff check --select C901 --config 'lint.mccabe.max-complexity = 12' .
	env -u DJANGO_SETTINGS_MODULE $(BIN)/mypy harness pit_harness
	# the site too, strict, with the Django and DRF stubs
	$(BIN)/mypy --config-file mypy-site.ini pitweb
	# the boundaries: the engine never imports the site; the sandbox stays light (pyproject.toml)
	$(BIN)/lint-imports
	# the harness's pinned dependencies install on newer Pythons too (wheels only, no install)
	for v in 3.12 3.13; do $(BIN)/pip install --quiet --disable-pip-version-check --dry-run \
	  --target $$(mktemp -d) --ignore-installed --only-binary=:all: --python-version $$v \
	  --require-hashes -r requirements/harness.lock || exit 1; done
	$(BIN)/python manage.py makemigrations --check --dry-run

# The published JSON Schemas (the receipt body's, the wire protocol's), written again from
# their types (never by hand).
schema: setup
	$(BIN)/python -m harness.receipt.schemas
	$(BIN)/python -m harness.protocol.schemas

clean:
	rm -rf $(VENV) $(DEMO) bench-out .wheels .tools node_modules
