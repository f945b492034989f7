# tritonhost: `make help` lists the tasks.

GO        ?= go
BIN_DIR   ?= bin
BACKENDS_DIR ?= backends
BUILD_DIR ?= build
GRPC_PORT ?= 8001
HTTP_PORT ?= 8000
METRICS_PORT ?= 8002
VERBOSE   ?= 0
BENCH_COUNT ?= 5

# go-nvml's cgo package (package gpu's tests use its mock) declares many
# NVML functions deprecated; compiling it warns about each one.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

TRITONHOST := $(BIN_DIR)/tritonhost

include mk/backends.mk
include mk/release.mk

GO_SOURCES := $(shell find . -name '*.go' -not -path './build/*' 2>/dev/null) \
              $(wildcard abi/*.c abi/*.h abi/*.so include/triton/core/*.h) go.mod go.sum

.DEFAULT_GOAL := all

.PHONY: all
all: $(TRITONHOST) backends ## build the server and every backend

.PHONY: backends
backends: $(BACKEND_LIBS) ## build every backend (repeat, square, identity, addsub, bls, conformance) into backends/

$(TRITONHOST): $(GO_SOURCES) $(VERSION_STAMP)
	@mkdir -p $(BIN_DIR)
	$(GO) build -ldflags '$(GO_LDFLAGS)' -o $@ ./cmd/tritonhost

.PHONY: serve
serve: all ## build everything and serve examples/models on localhost: gRPC 8001, HTTP 8000, metrics 8002
	$(TRITONHOST) serve --model-repository examples/models --backend-directory $(BACKENDS_DIR) \
		--grpc-address 127.0.0.1 --grpc-port $(GRPC_PORT) --http-address 127.0.0.1 --http-port $(HTTP_PORT) \
		--metrics-port $(METRICS_PORT) --log-verbose $(VERBOSE)

.PHONY: serve-gpu
serve-gpu: all ## serve examples/models and their GPU variants, examples/models_gpu (needs NVIDIA GPUs)
	$(TRITONHOST) serve --model-repository examples/models --model-repository examples/models_gpu \
		--backend-directory $(BACKENDS_DIR) --grpc-address 127.0.0.1 --grpc-port $(GRPC_PORT) --http-address 127.0.0.1 \
		--http-port $(HTTP_PORT) --metrics-port $(METRICS_PORT) --log-verbose $(VERBOSE)

.PHONY: test
test: all ## run every test: pure-Go packages without cgo, everything with the race detector, abi under cgocheck2
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) test -count=1 ./core/... ./frontend/... ./loader/... ./gpu/...
	$(GO) test -race -count=1 ./...
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 ./abi/...

.PHONY: soak
soak: all ## run the reliability suite at full scale (1000 streams x 100 requests, 35,000 pipelined requests, ...; several minutes)
	$(GO) test -count=1 -timeout 60m -v ./reliability -soak

# make bench writes its run to BENCH_OUT and compares it with BENCH_BASE,
# the results kept in the repository (benchstat); copy BENCH_OUT over
# BENCH_BASE to keep a run.
BENCH_OUT ?= $(BUILD_DIR)/bench/results.txt
BENCH_BASE ?= bench/results.txt

.PHONY: bench
bench: all $(BENCHSTAT) ## run the benchmarks (BENCH_COUNT times each, default 5) and `tritonhost perf` (bench/perf.sh) into build/bench/results.txt, then compare with bench/results.txt (benchstat)
	GO=$(GO) bench/run.sh $(BENCH_OUT) $(BENCH_COUNT) $(TRITONHOST)
	$(BENCHSTAT) $(BENCH_BASE) $(BENCH_OUT)

.PHONY: proto
proto: ## regenerate the Go code of proto/*.proto (needs protoc, protoc-gen-go, protoc-gen-go-grpc)
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" protoc --proto_path=proto --go_out=. --go_opt=module=tritonhost \
		--go-grpc_out=. --go-grpc_opt=module=tritonhost proto/model_config.proto proto/grpc_service.proto

.PHONY: clean
clean: ## remove build outputs
	rm -rf $(BIN_DIR) $(BUILD_DIR) $(BACKENDS_DIR) $(DIST_DIR)

.PHONY: help
help: ## list the tasks
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^[^:]*:([a-z-]+):.*## /\1\t/; s/^([a-z-]+):.*## /\1\t/' | \
		awk -F'\t' '{ printf "  make %-15s %s\n", $$1, $$2 }'
