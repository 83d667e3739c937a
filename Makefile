# brokerspec: the two commands the README promises, plus the deep tiers.
#
#   make run         the main job on embedded defaults: the differential check of every domain and profile,
#                    then a generated corpus with planted faults audited on local Spark (report in
#                    brokerspec-audit/report.html)
#   make test        mypy --strict, then the fast test tier with branch coverage gated at 95%
#   make test-deep   the deep tier: larger Hypothesis runs and CrossHair budgets, a long check, 8 real brokers,
#                    and the mutation score
#   make mutation    the conformance suite's mutation score: every cosmic-ray mutant of impl/ and every planted
#                    bug (report in brokerspec-mutation/); fails below 90% or when a planted bug survives
#   make bench       the benchmark (figures only, no timed assertions)
#   make docs        regenerate the spec-made tables in docs/*.md (a test checks they are current)
#
# The first use creates .venv and installs the package with its dev tools. The install is a
# setuptools *strict* editable install: a tree of links under build/ with the real import
# names (brokerspec.spec -> spec/ ...), which mypy can read (it cannot follow import hooks).
# Adding a source file re-runs the install automatically.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SOURCES := pyproject.toml $(shell find spec reference impl src -name '*.py' -o -name '*.json' -o -name '*.java' 2>/dev/null)
BUDGET ?= 60s
HISTORIES ?= 400
FAULTS ?= 12
CORPUS ?= brokerspec-corpus
REPORT ?= brokerspec-audit
COVERED := spec/*,reference/*,impl/*

.PHONY: install run test test-deep mutation typecheck bench docs clean

$(STAMP): $(SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=strict
	touch $@

install: $(STAMP)

run: $(STAMP)
	$(BIN)/brokerspec check --budget $(BUDGET)
	$(BIN)/brokerspec generate --histories $(HISTORIES) --faults $(FAULTS) --seed 1 --out $(CORPUS)
	$(BIN)/brokerspec audit $(CORPUS)/data --out $(REPORT) --expect $(CORPUS)/faults.jsonl

typecheck: $(STAMP)
	$(BIN)/mypy --strict -p brokerspec
	MYPYPATH=tests $(BIN)/mypy --strict --explicit-package-bases tests benchmarks

test: typecheck
	$(BIN)/pytest --cov=brokerspec --cov-branch --cov-report=term --cov-report=xml
	$(BIN)/coverage report --include='$(COVERED)' --fail-under=95

test-deep: typecheck
	BROKERSPEC_DEEP=1 BROKERSPEC_REAL8=1 $(BIN)/pytest
	$(BIN)/brokerspec check --budget 10m
	$(MAKE) mutation

mutation: $(STAMP)
	$(BIN)/brokerspec mutation-score --out brokerspec-mutation

bench: $(STAMP)
	$(BIN)/python benchmarks/addressing_bench.py
	$(BIN)/python benchmarks/duplicates_bench.py
	$(BIN)/python benchmarks/balancing_bench.py
	$(BIN)/python benchmarks/store_choice.py
	$(BIN)/python benchmarks/audit_bench.py
	$(BIN)/python benchmarks/topologies_bench.py

docs: $(STAMP)
	$(BIN)/python -m brokerspec.doctables
	$(BIN)/python -m brokerspec.doctables_duplicates
	$(BIN)/python -m brokerspec.topology_plot docs/images

clean:
	rm -rf $(VENV) build *.egg-info .coverage coverage.xml .hypothesis .mypy_cache brokerspec-failures $(CORPUS) $(REPORT)
