# brokerspec: the two commands the README promises, plus the deep tiers.
#
#   make run         the main job on embedded defaults: the differential check of every domain and profile,
#                    then a generated corpus with planted faults audited on local Spark (report in
#                    brokerspec-audit/report.html); --master makes the audit use Spark although the corpus
#                    is small enough for one process
#   make test        mypy --strict, then the fast test tier on WORKERS processes (2) with branch coverage gated
#                    at 95% (it fetches the Artemis release of the real-broker smoke first, when Maven and a
#                    JDK are there); it prints the 30 slowest tests, so the log says where the time goes
#   make test-deep   the deep tier: larger Hypothesis runs and CrossHair budgets, a long check, 8 real brokers,
#                    the whole catalogue against every Artemis release, and the mutation score
#   make artemis     the whole catalogue against every Artemis release in the table: agree, differ or not
#                    expressible, case by case, written into docs/artemis-fidelity.md
#   make artemis-fuzz  fuzzing against every Artemis release, FUZZ_BUDGET (10m) per domain and release (balancing
#                    without resend: a bridge resending what it lost the confirmation of is a fault no client can
#                    cause, so the adapter cannot express it; ack, transactions and the rest are fuzzed)
#   make broker-wire the whole catalogue (addressing, duplicates) against brokerspec's own STOMP broker over the
#                    wire, then make broker-fuzz: BROKER_FUZZ (5m) of fuzzing per domain through the same adapter
#                    (test-deep runs the catalogue with its tests and then broker-fuzz)
#   make mutation    the conformance suite's mutation score: every cosmic-ray mutant of impl/ and every planted
#                    bug, every declared-equivalent survivor checked (report in brokerspec-mutation/); fails
#                    below 90% or when a planted bug survives
#   make bench       every benchmark (figures only, no timed assertions; before-vs-after columns time the commit
#                    before the throughput work in the same run); BENCH_SIZES=1000000 for a shorter audit part
#   make docs        regenerate the spec-made tables in docs/*.md, docs/sut-author-guide.md and the command
#                    output shown in the guides (tests check they are current)
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

ARTEMIS_SMOKE ?= 2.40.0
# Tests are shared out to WORKERS processes one by one (--dist loadgroup), so both finish together; the tests
# that share a fixture wider than one test (a Spark session, a broker network, an Artemis broker) are kept
# on one worker by tests/conftest.py, so each such fixture is still built once.
WORKERS ?= 2
FUZZ_BUDGET ?= 10m
BROKER_FUZZ ?= 5m
# Sizes (events) of the audit and memory benchmarks in make bench; the throughput targets are stated at 5M and 20M.
BENCH_SIZES ?= 5000000,20000000

.PHONY: install run test test-deep mutation typecheck bench docs clean artemis artemis-fetch artemis-fuzz broker-wire broker-fuzz

$(STAMP): $(SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=strict
	touch $@

install: $(STAMP)

run: $(STAMP)
	$(BIN)/brokerspec check --budget $(BUDGET)
	$(BIN)/brokerspec generate --histories $(HISTORIES) --faults $(FAULTS) --seed 1 --out $(CORPUS)
	$(BIN)/brokerspec audit $(CORPUS)/data --out $(REPORT) --expect $(CORPUS)/faults.jsonl --master 'local[*]'

typecheck: $(STAMP)
	$(BIN)/mypy --strict -p brokerspec
	MYPYPATH=tests:benchmarks $(BIN)/mypy --strict --explicit-package-bases tests
	cd benchmarks && MYPYPATH=../tests ../$(BIN)/mypy --strict --cache-dir ../.mypy_cache/benchmarks *.py

# A machine without Maven or a JDK still runs the fast tier: the real-Artemis smoke then skips, unless
# BROKERSPEC_REQUIRE_ARTEMIS=1 (CI) makes it fail.
artemis-fetch: $(STAMP)
	-$(BIN)/brokerspec artemis fetch --release $(ARTEMIS_SMOKE)

artemis: $(STAMP)
	$(BIN)/brokerspec artemis fetch
	$(BIN)/brokerspec artemis fidelity --page docs/artemis-fidelity.md --json brokerspec-fidelity/fidelity.json

artemis-fuzz: $(STAMP)
	$(BIN)/brokerspec artemis fetch
	$(BIN)/brokerspec fuzz --sut artemis:2.40.0 --profile artemis-latest --domain addressing --budget $(FUZZ_BUDGET) --seed 1
	$(BIN)/brokerspec fuzz --sut artemis:2.40.0 --profile artemis-latest --domain duplicates --budget $(FUZZ_BUDGET) --seed 1
	$(BIN)/brokerspec fuzz --sut artemis:2.11.0 --profile artemis-2.11 --domain addressing --budget $(FUZZ_BUDGET) --seed 1
	$(BIN)/brokerspec fuzz --sut artemis:2.11.0 --profile artemis-2.11 --domain duplicates --budget $(FUZZ_BUDGET) --seed 1
	$(BIN)/brokerspec fuzz --sut artemis:2.40.0 --profile artemis-latest --domain balancing --exclude-op resend --budget $(FUZZ_BUDGET) --seed 1
	$(BIN)/brokerspec fuzz --sut artemis:2.11.0 --profile artemis-2.11 --set balancing.copy_before_target=false --domain balancing --exclude-op resend --budget $(FUZZ_BUDGET) --seed 1

test: typecheck artemis-fetch
	$(BIN)/pytest -n $(WORKERS) --dist loadgroup --durations=30 --cov=brokerspec --cov-branch --cov-report=term --cov-report=xml
	$(BIN)/coverage report --include='$(COVERED)' --fail-under=95

test-deep: typecheck
	BROKERSPEC_DEEP=1 BROKERSPEC_REAL8=1 $(BIN)/pytest -n $(WORKERS) --dist loadgroup
	$(BIN)/brokerspec check --budget 10m
	-$(MAKE) artemis
	$(MAKE) artemis-fuzz
	$(MAKE) broker-fuzz
	$(MAKE) mutation

# The catalogue through the deep test, which fails on a disagreement and accepts what STOMP cannot express (a
# plain `brokerspec conform --sut brokerspec-broker` exits non-zero for those too). STOMP cannot express XA
# (prepare), deleting one ID or a per-address cache size: the duplicates fuzz leaves them out.
broker-wire: $(STAMP)
	BROKERSPEC_DEEP=1 $(BIN)/pytest tests/broker/test_conform_over_wire.py
	$(MAKE) broker-fuzz

broker-fuzz: $(STAMP)
	$(BIN)/brokerspec fuzz --sut brokerspec-broker --profile artemis-latest --domain addressing \
		--budget $(BROKER_FUZZ) --seed 1 --out brokerspec-broker-wire/fuzz
	$(BIN)/brokerspec fuzz --sut brokerspec-broker --profile artemis-latest --domain duplicates --exclude-op prepare \
		--exclude-op delete_id --exclude-op set_id_cache_size --budget $(BROKER_FUZZ) --seed 1 \
		--out brokerspec-broker-wire/fuzz

mutation: $(STAMP)
	$(BIN)/brokerspec mutation-score --out brokerspec-mutation

bench: $(STAMP)
	$(BIN)/python benchmarks/addressing_bench.py
	$(BIN)/python benchmarks/duplicates_bench.py
	$(BIN)/python benchmarks/balancing_bench.py
	$(BIN)/python benchmarks/wildcard_bench.py
	$(BIN)/python benchmarks/store_choice.py
	$(BIN)/python benchmarks/topologies_bench.py
	$(BIN)/python benchmarks/replay_bench.py
	$(BIN)/python benchmarks/check_bench.py --examples 100 --rounds 3 --shrink
	$(BIN)/python benchmarks/pipe_bench.py
	$(BIN)/python benchmarks/broker_bench.py
	$(BIN)/python benchmarks/memory_bench.py --sizes $(BENCH_SIZES)
	$(BIN)/python benchmarks/audit_bench.py --sizes $(BENCH_SIZES) --before

docs: $(STAMP)
	$(BIN)/python -m brokerspec.sutguide --write
	$(BIN)/python -m brokerspec.docsamples --write
	$(BIN)/python -m brokerspec.doctables
	$(BIN)/python -m brokerspec.doctables_duplicates
	$(BIN)/python -m brokerspec.doctables_rules
	$(BIN)/python -m brokerspec.topology_plot docs/images

clean:
	rm -rf $(VENV) build *.egg-info .coverage coverage.xml .hypothesis .mypy_cache brokerspec-failures brokerspec-fidelity brokerspec-broker-wire $(CORPUS) $(REPORT)
