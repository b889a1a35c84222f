# egharness: the two set-up commands are `make run` and `make test`.
GO ?= go
BIN := bin/egharness

.PHONY: build run test golden golden-check bench vet

build: ## build bin/egharness
	$(GO) build -o $(BIN) ./tools/egharness

run: build ## run every scenario against the reference translator, with coverage
	$(BIN) run

test: ## vet, unit tests and the ginkgo conformance suite
	$(GO) vet ./...
	$(GO) test ./...

golden: build ## rewrite golden files (refused when CI is set); read `git diff golden` after
	$(BIN) golden --update

golden-check: build ## check golden files and list stale ones
	$(BIN) golden

bench: ## Go benchmarks (benchstat-friendly)
	$(GO) test -run '^$$' -bench . -benchmem ./...
