# aistack.gpu_node — every entry point. Each target bootstraps what it needs (tooling/bootstrap).
# Each target carries a one-line `## description`; `make help` (the default) lists them all.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VENV := $(CURDIR)/.venv
export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.cache/collections
export ANSIBLE_FORCE_COLOR := false
export CONTAINERS_CONF := $(CURDIR)/tests/testbed/containers.conf
export PY_COLORS := 0
export NO_COLOR := 1

SETUP_DONE := .cache/.setup-done
SANITY_TREE := $(CURDIR)/.cache/sanity/ansible_collections/aistack/gpu_node
MOLECULE_SCENARIOS := $(filter-out gpu resources,$(notdir $(wildcard molecule/*)))

.PHONY: help setup setup-testbed site check test lint sanity unit integration molecule build changelog-lint \
	wheelhouse gpu-carry test-gpu drift bench

help: ## this list: every target, one line each
	@awk -F ':.*## ' '/^[a-z-]+:.*## / {printf "  make %-15s %s\n", $$1, $$2}' Makefile

setup: ## prepare the tooling (.venv, pinned collections) with tooling/bootstrap
	@tooling/bootstrap
	@touch $(SETUP_DONE)

# Targets below need the tooling; it is prepared once, and again when its pins change.
$(SETUP_DONE): tooling/bootstrap tooling/requirements.txt tooling/collections.yml tooling/bundle.txt
	@tooling/bootstrap
	@touch $@

setup-testbed: ## the tooling plus the podman testbed the integration and molecule tests use
	@tooling/bootstrap --testbed
	@touch $(SETUP_DONE)

site: $(SETUP_DONE) ## provision this machine: site.yml against inventories/local (ARGS=... passed on)
	@echo "==> site.yml on this machine (inventories/local)"
	ansible-playbook site.yml $(ARGS)

check: $(SETUP_DONE) ## site.yml in check and diff mode on this machine: nothing changes
	@echo "==> site.yml in check and diff mode on this machine: nothing changes"
	ansible-playbook site.yml --check --diff $(ARGS)

test: setup-testbed ## the whole test suite: lint, sanity, unit, integration, molecule
	@$(MAKE) --no-print-directory lint sanity unit integration molecule
	@echo "==> all tests passed"

lint: $(SETUP_DONE) ## yamllint, ansible-lint (production profile), changelog lint, role READMEs vs argument specs
	@echo "==> yamllint"
	yamllint --strict .
	@echo "==> ansible-lint (production profile)"
	ansible-lint --offline
	@$(MAKE) --no-print-directory changelog-lint
	@echo "==> role READMEs against meta/argument_specs.yml"
	python tooling/role_docs.py --check

changelog-lint: $(SETUP_DONE) ## antsibull-changelog lint of changelogs/
	@echo "==> antsibull-changelog lint"
	antsibull-changelog lint

sanity: $(SETUP_DONE) ## ansible-test sanity in an assembled collection tree
	@echo "==> ansible-test sanity in an assembled $(SANITY_TREE)"
	rm -rf $(SANITY_TREE) && mkdir -p $(SANITY_TREE)
	git ls-files -co --exclude-standard -z | rsync -a --from0 --files-from=- ./ $(SANITY_TREE)/
	@pip_version=$$(python -c 'import types; from ansible_test._internal.python_requirements import get_venv_packages; \
	  print(get_venv_packages(types.SimpleNamespace(version="3.11"))["pip"])'); \
	cached=$$HOME/.ansible/test/cache/get_pip_$${pip_version//./_}.py; \
	if ! grep -qs 'pip' "$$cached" && ! curl -fsS --max-time 10 -o "$$cached" \
	     https://ci-files.testing.ansible.com/ansible-test/get-pip-$$pip_version.py 2>/dev/null; then \
	  echo "==> ansible-test's pip bootstrap is unreachable: using tooling/ansible_test_get_pip.py"; \
	  mkdir -p "$$(dirname "$$cached")" && cp tooling/ansible_test_get_pip.py "$$cached"; fi
	cd $(SANITY_TREE) && git init -q && git add -A && \
	  ansible-test sanity --python 3.11 --requirements --color no $(ARGS)

unit: $(SETUP_DONE) ## pytest unit tests with coverage (fails under 90%)
	@echo "==> pytest unit tests"
	python -m pytest tests/unit -p no:cacheprovider \
	  --cov=plugins --cov-report=term-missing:skip-covered --cov-fail-under=90 $(ARGS)

integration: $(SETUP_DONE) ## pytest integration tests
	@echo "==> pytest integration tests"
	python -m pytest tests/integration -p no:cacheprovider $(ARGS)

molecule: $(SETUP_DONE) ## every molecule scenario except gpu and resources, on podman nodes
	@tests/testbed/build-node-image
	@for scenario in $(MOLECULE_SCENARIOS); do \
	  echo "==> molecule test -s $$scenario"; \
	  molecule test -s $$scenario || exit 1; \
	done
	@echo "==> molecule: $(words $(MOLECULE_SCENARIOS)) scenario(s) passed: $(MOLECULE_SCENARIOS)"

build: $(SETUP_DONE) ## build the collection tarball into .cache/build
	ansible-galaxy collection build --force --output-path .cache/build

# Where PyPI is reachable: the wheelhouse for an air-gapped GPU host (DIR=... to choose where).
wheelhouse: $(SETUP_DONE) ## Python 3.12 wheels an air-gapped GPU host needs for make test-gpu (DIR=...)
	tooling/make-wheelhouse $(DIR)

gpu-carry: $(SETUP_DONE) ## what make test-gpu needs on an air-gapped GPU host, in .cache/gpu-carry (APEX_ARCHIVE=...)
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
	@tests/testbed/build-node-image
	python tests/bench/run_bench.py $(if $(NODES),--nodes $(NODES)) $(ARGS)
