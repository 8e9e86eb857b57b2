# aistack.gpu_node — every entry point. Each target bootstraps what it needs (dev/bootstrap).
# Each target carries a one-line `## description`; `make help` (the default) lists them all.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VENV := $(CURDIR)/.venv
export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.cache/collections
export ANSIBLE_FORCE_COLOR := false
# Facts only as ansible_facts.*, as ansible-core 2.24 will have it by default (2.20 deprecates the
# injected top-level ansible_* names): every target, molecule scenarios included, runs so.
export ANSIBLE_INJECT_FACT_VARS := False
export CONTAINERS_CONF := $(CURDIR)/tests/support/testbed/containers.conf
export PY_COLORS := 0
export NO_COLOR := 1

SETUP_DONE := .cache/.setup-done
SANITY_TREE := $(CURDIR)/.cache/sanity/ansible_collections/aistack/gpu_node
BUILT_TARBALL = .cache/build/aistack-gpu_node-$(shell sed -n 's/^version: //p' galaxy.yml).tar.gz
MOLECULE_SCENARIOS := $(filter-out gpu resources,$(notdir $(wildcard molecule/*)))

.PHONY: help setup setup-testbed site check test lint sanity unit integration molecule build changelog-lint \
	wheelhouse gpu-carry test-gpu drift bench matrix docs galaxy demo

help: ## this list: every target, one line each
	@awk -F ':.*## ' '/^[a-z-]+:.*## / {printf "  make %-15s %s\n", $$1, $$2}' Makefile

setup: ## prepare the tooling (.venv, pinned collections) with dev/bootstrap
	@dev/bootstrap
	@touch $(SETUP_DONE)

# Targets below need the tooling; it is prepared once, and again when its pins change.
$(SETUP_DONE): dev/bootstrap dev/requirements.txt dev/collections.yml dev/bundle.txt
	@dev/bootstrap
	@touch $@

setup-testbed: ## the tooling plus the podman testbed the integration and molecule tests use
	@dev/bootstrap --testbed
	@touch $(SETUP_DONE)

site: $(SETUP_DONE) ## provision this machine: site.yml against inventories/local (ARGS=... passed on)
	@echo "==> site.yml on this machine (inventories/local)"
	ansible-playbook site.yml $(ARGS)

demo: setup-testbed ## the whole job on a fresh local podman node (site.yml, no-op re-run, check, drift), then what the node has
	python3 dev/demo.py

check: $(SETUP_DONE) ## site.yml in check and diff mode on this machine: nothing changes
	@echo "==> site.yml in check and diff mode on this machine: nothing changes"
	ansible-playbook site.yml --check --diff $(ARGS)

# Each layer (and each molecule scenario) is timed by dev/test_times.py into TEST_TIMES; the table is
# printed at the end, also when a layer failed (the layers after it shown as not run). The static
# layers (and ansible-core 2.21's sanity, unit and deprecation lane) need no node and run on about one
# core each: they run in STATIC_LANES lanes side by side (dev/lanes.py), longest first; then the
# layers that drive nodes, one after the other.
SETUP_LAYER := setup-testbed
STATIC_LAYERS := matrix-2.21 lint sanity galaxy unit
STATIC_LANES ?= $(shell nproc)
NODE_LAYERS := integration molecule
# The table's lines in order, each shown as not run where the run stopped before it; a matrix line last.
TEST_LAYERS := $(SETUP_LAYER) $(filter-out matrix-%,$(STATIC_LAYERS)) $(NODE_LAYERS)
TEST_MATRIX_EXPECT := $(patsubst matrix-%,"matrix %",$(filter matrix-%,$(STATIC_LAYERS)))
TEST_TIMES := $(CURDIR)/.cache/test-times.tsv
MOLECULE_EXPECT := "molecule/node image" $(addprefix molecule/,$(MOLECULE_SCENARIOS))

test: ## the whole test suite: lint, sanity, unit, galaxy and 2.21's sanity, unit and deprecation lane side by side; then integration, molecule; time per layer
	@mkdir -p $(dir $(TEST_TIMES)) && : > $(TEST_TIMES)
	@export AISTACK_TEST_TIMES=$(TEST_TIMES); status=0; \
	python3 dev/test_times.py run $(SETUP_LAYER) -- $(MAKE) --no-print-directory $(SETUP_LAYER) || status=$$?; \
	if [ $$status = 0 ]; then python3 dev/lanes.py --lanes $(STATIC_LANES) $(STATIC_LAYERS) || status=$$?; fi; \
	if [ $$status = 0 ]; then \
	  for layer in $(NODE_LAYERS); do \
	    python3 dev/test_times.py run $$layer -- $(MAKE) --no-print-directory $$layer || { status=$$?; break; }; \
	  done; \
	fi; \
	python3 dev/test_times.py table $(TEST_TIMES) --expect $(TEST_LAYERS) $(MOLECULE_EXPECT) $(TEST_MATRIX_EXPECT); \
	if [ $$status = 0 ]; then echo "==> all tests passed"; fi; \
	exit $$status

lint: $(SETUP_DONE) ## yamllint, ansible-lint, changelog lint, role READMEs vs argument specs, make help, docs naming no outside file, docs lint and docsite build
	@echo "==> yamllint"
	yamllint --strict .
	@echo "==> ansible-lint (production profile)"
	ansible-lint --offline
	@$(MAKE) --no-print-directory changelog-lint
	@echo "==> role READMEs against meta/argument_specs.yml"
	python dev/role_docs.py --check
	@python dev/make_help_check.py
	@python dev/doc_paths_check.py
	@dev/docs --lint

docs: $(SETUP_DONE) ## the docsite (antsibull-docs: every module, filter, role) into .cache/docs/html, no warnings
	@dev/docs

changelog-lint: $(SETUP_DONE) ## antsibull-changelog lint of changelogs/
	@echo "==> antsibull-changelog lint"
	antsibull-changelog lint

sanity: $(SETUP_DONE) ## ansible-test sanity (ansible-core 2.19, Python 3.11) in an assembled collection tree
	dev/sanity $(SANITY_TREE) 3.11 $(ARGS)

unit: $(SETUP_DONE) ## pytest unit tests with coverage (fails under 90%)
	@echo "==> pytest unit tests"
	python -m pytest tests/unit -p no:cacheprovider \
	  --cov=plugins --cov-report=term-missing:skip-covered --cov-fail-under=90 $(ARGS)

# The integration tests run in INTEGRATION_WORKERS pytest-xdist workers (one per CPU; 0: in pytest's own process),
# a file at a time on one worker (a file's tests share its module fixtures and, in test_refusal_helper, the helper's
# snapshot file on this machine), the longest files first (tests/integration/conftest.py) so that the workers end together.
INTEGRATION_WORKERS ?= $(shell nproc)
integration: $(SETUP_DONE) ## pytest integration tests, in INTEGRATION_WORKERS workers (one per CPU)
	@echo "==> pytest integration tests ($(INTEGRATION_WORKERS) workers)"
	python -m pytest tests/integration -p no:cacheprovider -n $(INTEGRATION_WORKERS) --dist loadfile --no-loadscope-reorder \
	  --durations=15 $(ARGS)

# Under `make test` the scenarios' times go to its table; alone, `make molecule` prints its own.
# The scenarios run in MOLECULE_LANES lanes side by side (dev/lanes.py), longest first so
# that the lanes end together; S=... runs only those named. Two lanes by default: one scenario keeps
# about one of the 2-core machine's CPUs busy (its controller, the node and podman take turns), so two
# side by side end sooner than one after the other (docs/testing.md, "Lanes").
MOLECULE_LANES ?= 2
MOLECULE_LONGEST := site apex_build conda miniconda numa_jupyter nvidia_driver bad_inputs container_toolkit
MOLECULE_ORDER := $(filter $(MOLECULE_SCENARIOS),$(MOLECULE_LONGEST)) $(filter-out $(MOLECULE_LONGEST),$(MOLECULE_SCENARIOS))
molecule: $(SETUP_DONE) ## every molecule scenario except gpu and resources, on podman nodes, in MOLECULE_LANES lanes (2), S=... for some; time per scenario
	@times=$${AISTACK_TEST_TIMES:-}; own=; \
	if [ -z "$$times" ]; then times=$(CURDIR)/.cache/molecule-times.tsv; own=1; : > $$times; fi; \
	export AISTACK_TEST_TIMES=$$times; status=0; scenarios="$(or $(S),$(MOLECULE_ORDER))"; \
	python3 dev/test_times.py run "molecule/node image" -- tests/support/testbed/build-node-image || status=$$?; \
	if [ $$status = 0 ]; then python3 dev/lanes.py --lanes $(MOLECULE_LANES) $$(printf "molecule/%s " $$scenarios) || status=$$?; fi; \
	if [ -n "$$own" ]; then python3 dev/test_times.py table $$times --expect $(MOLECULE_EXPECT); fi; \
	if [ $$status = 0 ]; then \
	  echo "==> molecule: $$(wc -w <<< "$$scenarios") scenario(s) passed: $$scenarios"; \
	fi; \
	exit $$status

build: $(SETUP_DONE) ## build the collection tarball into .cache/build
	ansible-galaxy collection build --force --output-path .cache/build

# Without the importer's ansible-lint pass: it only logs (an import never fails on it), and `make lint`
# already runs ansible-lint's production profile on the whole tree and fails on what it finds.
galaxy: build ## galaxy-importer (Galaxy's own import checks) on the built tarball
	@echo "==> galaxy-importer on $(BUILT_TARBALL)"
	cd .cache/build && GALAXY_IMPORTER_RUN_ANSIBLE_LINT=false \
		"$$(../../dev/tool-venv galaxy-importer)/python" -m galaxy_importer.main $(notdir $(BUILT_TARBALL))

# Not in `make test` (it takes an hour cold on 2 cores): dev/matrix.py says what it runs.
matrix: $(SETUP_DONE) ## every supported ansible-core line in its own venv: sanity, unit, deprecation lane, site scenario at both ends
	python dev/matrix.py $(if $(VERSIONS),--versions $(VERSIONS)) $(if $(CHECKS),--checks $(CHECKS))

# Where PyPI is reachable: the wheelhouse for an air-gapped GPU host (DIR=... to choose where).
wheelhouse: $(SETUP_DONE) ## Python 3.12 wheels an air-gapped GPU host needs for make test-gpu (DIR=...)
	dev/make-wheelhouse $(DIR)

gpu-carry: $(SETUP_DONE) ## what make test-gpu needs on an air-gapped GPU host, in .cache/gpu-carry (APEX_ARCHIVE=..., NVIDIA_CTK_SOURCE=...)
	tests/gpu/make-gpu-carry

# On the GPU host itself; needs no .venv (the tooling comes from the wheelhouse).
test-gpu: ## the GPU scenario on this GPU host, offline; writes tests/gpu/REPORT.md
	tests/gpu/run-gpu-scenario

INVENTORY ?= inventories/local/hosts.yml
# Exit 0: no drift, 2: drift, 1: an error or an unreachable host (tools/README.md).
drift: $(SETUP_DONE) ## drift check of INVENTORY (default: this machine): JSON, JUnit, summary in drift-report/
	python tools/aistack-drift -i $(INVENTORY) $(ARGS)

# Prints figures; never a pass/fail on time. NODES=... sets the drift fleet size (default 4).
bench: setup-testbed ## benchmarks on fresh podman nodes: first vs second site.yml run, drift over NODES nodes
	@tests/support/testbed/build-node-image
	python tests/bench/run_bench.py $(if $(NODES),--nodes $(NODES)) $(ARGS)
