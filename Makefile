# The two commands: `make run` and `make test`. Everything installs itself when needed.
SHELL := /bin/bash
export SCARF_ANALYTICS := false
ENV_FILE := $(if $(wildcard .env),.env,.env.example)

.PHONY: run test test-node24 chromium clients gate bench build install typecheck lint format-check clean

# better-sqlite3's addon, once compiled on this machine, is kept in ~/.cache/sift/prebuilds: the
# next clean install unpacks it rather than compiling it again (see test/support/prebuilt-addon.sh).
PREBUILDS := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/sift/prebuilds

node_modules/.installed: package.json package-lock.json
	npm_config_better_sqlite3_local_prebuilds=$(PREBUILDS) npm ci --no-audit --no-fund
	@test/support/prebuilt-addon.sh $(PREBUILDS)
	@touch $@

install: node_modules/.installed

# Clients of Firecrawl's API written by others (its SDK's 1.x line, LangChain's loader, its MCP
# server), pinned in test/clients with their own lockfile: the tests run them against sift.
test/clients/node_modules/.installed: test/clients/package.json test/clients/package-lock.json
	npm ci --prefix test/clients --no-audit --no-fund
	@touch $@

clients: test/clients/node_modules/.installed

dist/src/main.js: node_modules/.installed $(shell find src migrations -name '*.ts' 2>/dev/null) tsconfig.json tsconfig.build.json nest-cli.json
	npm run build

build: dist/src/main.js

# The main thread's young generation: under load V8 grows it to 32 MB. At 16 MB a batch job's
# peak memory is 14 MB lower for the same CPU per target, and a cached /v1/fetch costs about 4 %
# more CPU. (Extraction workers set their own.) V8's helper threads (garbage collection,
# compilation): two, not Node's four; each keeps a malloc arena of 2-4 MB, and two is what a
# two-core machine runs at once (peak 2-4 MB lower, no CPU we could measure). package.json's
# start and the tests' sift processes use the same flags.
NODE_FLAGS := --max-semi-space-size=8 --v8-pool-size=2

run: build
	node --env-file=$(ENV_FILE) $(NODE_FLAGS) dist/src/main.js

# Every suite, then the two that time the main thread, alone (see jest.config.js).
test: build chromium clients
	SIFT_TIMING_PASS=0 npx jest --ci
	SIFT_TIMING_PASS=1 npx jest --ci

# The suite again under Node 24 LTS (from the npm registry, kept in ~/.cache/sift); CI runs both.
test-node24: build chromium clients
	test/support/node24.sh

# The render and Swagger UI tests drive Debian's Chromium: installed when it can be, else a clear stop.
chromium:
	@test/support/chromium.sh

typecheck: install
	npx tsc -p tsconfig.json --noEmit

lint: install
	npx eslint .

format-check: install
	npx prettier --check "{src,test,bench,migrations}/**/*.ts"

gate: typecheck lint format-check test

# What a user would pick instead of sift to read a site (crawlee), pinned in bench/crawlee with its
# own lockfile: bench/crawl runs it beside sift's crawl.
bench/crawlee/node_modules/.installed: bench/crawlee/package.json bench/crawlee/package-lock.json
	npm ci --prefix bench/crawlee --no-audit --no-fund
	@touch $@

bench: install build bench/crawlee/node_modules/.installed
	npm run bench --

clean:
	rm -rf dist node_modules
