# darman's build, test and benchmark entry points. `make test` is what CI
# runs (.ci/run) and what the README gives a newcomer: it installs what the
# tests need, then checks formatting and vet, then runs every test.

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
GOFILES  = $(shell git ls-files '*.go')

.PHONY: all build install deps check cross test bench release clean test-extension

all: build

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/darman ./cmd/darman

install:
	$(GO) install -trimpath -ldflags "$(LDFLAGS)" ./cmd/darman

# What the tests need beyond Go and its module proxy, in parts that do not
# wait for each other (`make test` runs them side by side, beside check and
# cross: they mostly wait for the network and the disk, those for the CPU).
# Each later part of darman that tests against a real peer (gopls, Neovim,
# Chromium, npm MCP servers) adds its install step here.
# Debian packages the tests drive: ripgrep (glob, grep and list use rg, and
# a test checks their Go fallback gives the same results), Neovim 0.7 and
# Emacs 28 with eglot (real editors driving darman lsp), clangd (the
# diagnostics pool's C server). Tests that need a
# missing one say so and skip.
APT_PACKAGES = ripgrep neovim emacs-nox elpa-eglot clangd
# Wine and MinGW run darman.exe's smoke suite (cmd/darman's TestWine:
# MinGW builds the ProcessPrng shim Wine 8 lacks; the prefix is cached in
# ~/.cache/darman-test/wine). Without recommends: Wine's would add Mesa,
# SDL, CUPS and the rest of a desktop that a console program never loads.
WINE_APT_PACKAGES = wine64 gcc-mingw-w64-x86-64-win32
# The VS Code extension's tests: Chromium drives the webview and code-server;
# code-server's kerberos module builds against libkrb5-dev.
EXTENSION_APT_PACKAGES = chromium libkrb5-dev

deps: deps-go deps-apt deps-gopls deps-npm deps-extension deps-sid

deps-go:
	$(GO) mod download

# Every missing Debian package after one apt-get update: those of the
# tests and the extension with their recommends, Wine's without.
deps-apt:
	@missing=$$(for p in $(APT_PACKAGES) $(EXTENSION_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	missing_wine=$$(for p in $(WINE_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing$$missing_wine" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && \
	    { [ -z "$$missing" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; } && \
	    { [ -z "$$missing_wine" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing_wine >/dev/null; }; \
	  else \
	    [ -z "$$missing" ] || echo "deps: install $$missing (Debian packages) to run every test (the editors', the language servers', the VS Code extension's browser tests); the tests that need them are skipped"; \
	    [ -z "$$missing_wine" ] || echo "deps: install $$missing_wine (Debian packages) to run darman.exe's tests under Wine; they are skipped without them"; \
	  fi; \
	fi

# diagnostics/ tests against real language servers: gopls into GOBIN.
deps-gopls:
	@command -v gopls >/dev/null 2>&1 || [ -x "$$($(GO) env GOPATH)/bin/gopls" ] || $(GO) install golang.org/x/tools/gopls@v0.23.0

deps-npm:
	@# pyright, typescript-language-server and typescript@6 (7 has no
	@# tsserver.js) into the project-local .cache/npm; TypeScript 7's native
	@# tsc --lsp into .cache/ts7 (6 owns the tsc command in .cache/npm).
	@if command -v npm >/dev/null 2>&1; then \
	  [ -x .cache/npm/node_modules/.bin/pyright-langserver ] && [ -x .cache/npm/node_modules/.bin/typescript-language-server ] || \
	  npm install --prefix .cache/npm --no-audit --no-fund --silent pyright@1.1.414 typescript-language-server@5.3.0 typescript@6 >/dev/null; \
	  [ -x .cache/ts7/node_modules/.bin/tsc ] || \
	  npm install --prefix .cache/ts7 --no-audit --no-fund --silent typescript@7.0.2 >/dev/null; \
	else echo "deps: install npm to run the pyright and typescript-language-server tests; they are skipped without it"; fi
	@# mcp/client and darman run against real MCP servers from npm.
	@if command -v npm >/dev/null 2>&1; then \
	  [ -x .cache/npm/node_modules/.bin/mcp-server-everything ] || \
	  npm install --prefix .cache/npm --no-audit --no-fund --silent @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31 >/dev/null; \
	fi
	@# Real clients of darman's own servers: the MCP inspector CLI and the
	@# conformance suite for darman mcp, the official ACP SDK for darman acp.
	@if command -v npm >/dev/null 2>&1; then \
	  [ -x .cache/npm/node_modules/.bin/mcp-inspector-cli ] && [ -x .cache/npm/node_modules/.bin/conformance ] && [ -d .cache/npm/node_modules/@agentclientprotocol/sdk ] || \
	  npm install --prefix .cache/npm --no-audit --no-fund --silent @modelcontextprotocol/inspector-cli@1.0.3 @modelcontextprotocol/conformance@0.1.16 @agentclientprotocol/sdk@2.4.0 >/dev/null; \
	fi

# The VS Code extension (vscode-extension/): its npm workspace (root
# package.json), then Node 24 and code-server 4.139.1 cached outside the
# repo in ~/.cache/darman-test (about 4 minutes once per machine;
# scripts/install-code-server.sh), after deps-apt: code-server's native
# modules build against libkrb5-dev.
deps-extension: deps-apt
	@if command -v npm >/dev/null 2>&1; then \
	  [ -d node_modules/vscode-languageclient ] && [ -d node_modules/playwright-core ] && [ -d node_modules/shiki ] || npm ci --no-audit --no-fund --silent >/dev/null; \
	  sh vscode-extension/scripts/install-code-server.sh; \
	else echo "deps: install Node.js and npm to test the VS Code extension; its tests are skipped without them"; fi

# The current editors (Helix 25.07, Neovim 0.12, Emacs 30) for editors/'
# tests: a Debian sid root cached in ~/.cache/darman-test/sid, prepared once
# per machine (scripts/install-sid-root.sh; about 2 minutes and 740 MB).
# After deps-apt: both use apt-get (debootstrap), which one lock serializes.
deps-sid: deps-apt
	@sh scripts/install-sid-root.sh

check:
	@unformatted=$$(gofmt -l $(GOFILES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# Cross-builds and vets every package for the release targets other than
# this machine's, so code for another OS is at least compiled and checked:
# go vet ./... (every package and its tests, type-checked and vetted; what
# they import compiled), go list -export ./... (compiles every package, the
# commands too, without linking them), and darman itself linked. The other
# commands (scripted-model, the release and benchmark tools) run only on
# the machine that builds, so they are compiled for each target but not
# linked (6 links fewer per target). For darwin/arm64 the test
# binaries of the packages with macOS code are linked too (go test -c,
# not run: there is no Mac here). Windows' darman.exe is also run, under
# Wine, by cmd/darman's TestWine in `go test`. One rule per target
# (cross-windows-amd64, …), so that `make -j` builds them side by side;
# each target's steps stay in one rule, since two go commands compiling
# the same target at once would both compile what they share.
CROSS_TARGETS = windows/amd64 windows/arm64 darwin/arm64 darwin/amd64 linux/arm64
CROSS_RULES = $(addprefix cross-,$(subst /,-,$(CROSS_TARGETS)))
# The packages with code of their own for macOS (processes, sandbox, store,
# dirs, tools), whose darwin test binaries are linked too; vet has already
# compiled every package's tests for every target.
CROSS_TEST_PACKAGES = ./internal/... ./agent/store ./agent/permission ./agent/tool/...

.PHONY: deps-go deps-apt deps-gopls deps-npm deps-extension deps-sid $(CROSS_RULES)

cross: $(CROSS_RULES)

$(CROSS_RULES): cross-%:
	@t=$*; export GOOS=$${t%-*} GOARCH=$${t#*-} CGO_ENABLED=0; \
	echo "cross: $$GOOS/$$GOARCH: go vet ./... && go list -export ./... && go build ./cmd/darman"; \
	$(GO) vet ./... && $(GO) list -export ./... >/dev/null && $(GO) build -o /dev/null ./cmd/darman || exit 1; \
	if [ "$$t" = darwin-arm64 ]; then \
	  echo "cross: darwin/arm64: go test -c $(CROSS_TEST_PACKAGES)"; \
	  out=$$(mktemp -d) && $(GO) test -c -o $$out $(CROSS_TEST_PACKAGES) >/dev/null; st=$$?; rm -rf $$out; exit $$st; \
	fi

# make test: what the tests need is installed while check and cross
# compile (their jobs run side by side; each line of output comes whole),
# then every test runs.
TEST_JOBS ?= 4
test:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=line deps check cross
	$(GO) test -race -count=1 -timeout 20m ./...
	$(MAKE) --no-print-directory test-extension

# The VS Code extension's tests after the Go tests: unit tests (stubbed vscode,
# real darman lsp), the webview in headless Chromium, then end to end in
# code-server. Skipped, saying why, where npm is missing.
test-extension:
	@if command -v npm >/dev/null 2>&1; then \
	  npm run --silent test -w vscode-extension && npm run --silent test:e2e -w vscode-extension; \
	else echo "test-extension: skipped: npm is not installed (the VS Code extension's tests need Node.js and npm)"; fi

# Benchmarks, reported in docs/benchmarks.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 60m ./... | tee bench.out

# Release files in dist/ (scripts/release): per target a stripped binary in
# a reproducible .tar.gz (.zip for Windows), its
# CycloneDX SBOM and platform VSIX; the universal VSIX; SHA256SUMS; sizes.
# VSIX=false leaves the VSIXes out (they need npm ci).
VSIX ?= true
release:
	$(GO) run ./scripts/release -out dist -version $(VERSION) -commit $(COMMIT) -vsix=$(VSIX)

clean:
	rm -rf bin bench.out dist
