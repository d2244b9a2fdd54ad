# Vigil: `make run` starts it, `make check` is the quick loop, `make test` runs every test,
# `make docs` builds the documentation site. See README.md and docs/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_VERSION := 0.13.9
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Python keeps the bytecode it compiles in var/pycache, even where the environment asks it not to
# (PYTHONDONTWRITEBYTECODE, as container images set it): without it every process of `make check`
# (pytest and its two workers) compiled Django, boto3 and the tests afresh, about 10 s of CPU each.
export PYTHONPYCACHEPREFIX := $(CURDIR)/var/pycache
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run check test lint fmt docs lock system-deps ldap clean

run: $(VENV)/.demo
	$(BIN)/python -m config.run

# Lint, then the tests that need no outside service and are not slow, on SQLite, two at a time:
# no root, no apt, no browser (`make test` runs them all). worksteal hands each worker half of
# the list in order and balances the end: a module's first costs (moto's backends, SES, the API
# schema) are paid by one worker, not both as xdist's default round-robin did (14 s of CPU).
check: lint
	env -u DATABASE_URL $(BIN)/pytest -m "not services and not slow" -n 2 --dist worksteal -q \
		-p no:schemathesis

# Two workers, each shared service (Galera, chromium, slapd, podman, make run) in one of them
# (tests/plugins/marks.py); PYTEST_ARGS= runs the suite in one process. See docs/testing.md.
PYTEST_ARGS ?= -n 2 --dist loadgroup --durations=30

test: $(VENV)/.test system-deps $(VENV)/.ldap
	cd tests/js && npm ci --no-audit --no-fund --silent
	$(BIN)/pytest $(PYTEST_ARGS)

# Whether the models need a migration not yet written (makemigrations --check) is a test,
# tests/test_migrations.py, run by make check and make test where Django is already set up.
lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/shellcheck --shell=sh agents/vigil-raid-push agents/vigil-galera-push \
		agents/vigil-nfs-push

fmt: $(VENV)/.test
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The documentation site from docs/ (mkdocs.yml) into var/site; --strict: a broken link or anchor,
# or a page left out of the nav, fails it (tests/test_docs.py builds it the same way).
docs: $(VENV)/.test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir var/site

# Re-pin after editing requirements/*.in.
lock: $(BIN)/uv
	cd requirements && ../$(BIN)/uv pip compile -q --python-version 3.11 base.in -o base.txt
	cd requirements && ../$(BIN)/uv pip compile -q --python-version 3.11 demo.in -o demo.txt
	cd requirements && ../$(BIN)/uv pip compile -q --python-version 3.11 test.in -o test.txt
	cd requirements && ../$(BIN)/uv pip compile -q --python-version 3.11 ldap.in -o ldap.txt

# Debian packages the tests drive for real (chromium, nginx, MariaDB Galera, sshd...).
system-deps:
	@missing=$$(grep -v '^\s*#' requirements/apt.txt | xargs -r -n1 sh -c 'dpkg-query -W -f="\$${Status}" "$$0" 2>/dev/null | grep -q "ok installed" || echo "$$0"'); \
	if [ -n "$$missing" ]; then \
		echo "Installing Debian packages:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@# NodeSource's nodejs carries npm and conflicts with Debian's npm package: ask apt only when npm is missing.
	@command -v npm >/dev/null || { echo "Installing Debian packages: npm"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends npm; }

# Debian ships venv's pip bootstrap apart (python3-venv): install it when venv fails.
$(BIN)/uv:
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { rm -rf $(VENV); \
		echo "python3 -m venv needs Debian's python3-venv; installing it"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv && \
		$(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -q uv==$(UV_VERSION)

$(VENV)/.demo: requirements/demo.txt | $(BIN)/uv
	$(BIN)/uv pip install -q --python $(BIN)/python -r requirements/demo.txt
	@touch $@

$(VENV)/.test: requirements/test.txt | $(BIN)/uv
	$(BIN)/uv pip install -q --python $(BIN)/python -r requirements/test.txt
	@touch $@ $(VENV)/.demo

# LDAP sign-in (django-auth-ldap): python-ldap builds against Debian's libldap2-dev and
# libsasl2-dev (requirements/apt.txt), so `make test` installs it after them; `make run`
# only with `make ldap` first.
$(VENV)/.ldap: requirements/ldap.txt | $(BIN)/uv system-deps
	$(BIN)/uv pip install -q --python $(BIN)/python -r requirements/ldap.txt
	@touch $@

ldap: system-deps $(VENV)/.ldap

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache test-output
