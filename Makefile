# aistack.gpu_node — every entry point. Each target bootstraps what it needs (tooling/bootstrap).
#   make site     provision this machine: site.yml against inventories/local
#   make test     the whole test suite: lint, sanity, unit, integration, molecule
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

SANITY_TREE := $(CURDIR)/.cache/sanity/ansible_collections/aistack/gpu_node
MOLECULE_SCENARIOS := $(filter-out gpu resources,$(notdir $(wildcard molecule/*)))

.PHONY: help setup setup-testbed site check test lint sanity unit integration molecule build changelog-lint

help:
	@sed -n 's/^#   //p' Makefile

setup:
	@tooling/bootstrap

setup-testbed:
	@tooling/bootstrap --testbed

site: setup
	@echo "==> site.yml on this machine (inventories/local)"
	ansible-playbook site.yml $(ARGS)

check: setup
	@echo "==> site.yml in check and diff mode on this machine: nothing changes"
	ansible-playbook site.yml --check --diff $(ARGS)

test: setup-testbed
	@$(MAKE) --no-print-directory lint sanity unit integration molecule
	@echo "==> all tests passed"

lint: setup
	@echo "==> yamllint"
	yamllint --strict .
	@echo "==> ansible-lint (production profile)"
	ansible-lint --offline
	@$(MAKE) --no-print-directory changelog-lint
	@echo "==> role READMEs against meta/argument_specs.yml"
	python tooling/role_docs.py --check

changelog-lint: setup
	@echo "==> antsibull-changelog lint"
	antsibull-changelog lint

sanity: setup
	@echo "==> ansible-test sanity in an assembled $(SANITY_TREE)"
	rm -rf $(SANITY_TREE) && mkdir -p $(SANITY_TREE)
	git ls-files -co --exclude-standard -z | rsync -a --from0 --files-from=- ./ $(SANITY_TREE)/
	cd $(SANITY_TREE) && git init -q && git add -A && \
	  ansible-test sanity --python 3.11 --requirements --color no $(ARGS)

unit: setup
	@echo "==> pytest unit tests"
	python -m pytest tests/unit -p no:cacheprovider \
	  --cov=plugins --cov-report=term-missing:skip-covered $(ARGS)

integration: setup
	@echo "==> pytest integration tests"
	python -m pytest tests/integration -p no:cacheprovider $(ARGS)

molecule: setup-testbed
	@for scenario in $(MOLECULE_SCENARIOS); do \
	  echo "==> molecule test -s $$scenario"; \
	  molecule test -s $$scenario || exit 1; \
	done
	@echo "==> molecule: $(words $(MOLECULE_SCENARIOS)) scenario(s) passed: $(MOLECULE_SCENARIOS)"

build: setup
	ansible-galaxy collection build --force --output-path .cache/build
