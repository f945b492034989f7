# tritonhost: `make help` lists the tasks.

GO        ?= go
BIN_DIR   ?= bin
LIB_DIR   ?= lib
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
LIBTRITONSERVER := $(LIB_DIR)/libtritonserver.so
EMBED := $(BIN_DIR)/embed

include mk/backends.mk
include mk/plugins.mk
include mk/release.mk

GO_SOURCES := $(shell find . -name '*.go' -not -path './build/*' 2>/dev/null) \
              $(wildcard abi/*.c abi/*.h abi/*.so include/triton/core/*.h) go.mod go.sum

.DEFAULT_GOAL := all

.PHONY: all
all: $(TRITONHOST) backends plugins lib embed ## build the server, every backend, the local cache and the checksum agent, libtritonserver.so and the embedding example

.PHONY: backends
backends: $(BACKEND_LIBS) ## build every backend (repeat, square, identity, addsub, bls, sequence, conformance, modelcontrol) into backends/

$(TRITONHOST): $(GO_SOURCES) $(VERSION_STAMP)
	@mkdir -p $(BIN_DIR)
	$(GO) build -ldflags '$(GO_LDFLAGS)' -o $@ ./cmd/tritonhost

.PHONY: lib
lib: $(LIBTRITONSERVER) ## build lib/libtritonserver.so: Triton's in-process C API, for applications that embed a server

# Go's c-shared build of cmd/libtritonserver (the API, and package embedded
# for TRITONSERVER_ServerNew), with the soname Triton backends name in
# DT_NEEDED. Go also writes a header of its own exports next to the
# library; include/triton/core/tritonserver.h is the API's, so that one
# goes.
$(LIBTRITONSERVER): $(GO_SOURCES) $(VERSION_STAMP)
	@mkdir -p $(LIB_DIR)
	$(GO) build -buildmode=c-shared \
		-ldflags '$(GO_LDFLAGS) -extldflags "-Wl,-soname,libtritonserver.so"' \
		-o $@ ./cmd/libtritonserver
	rm -f $(LIB_DIR)/libtritonserver.h

.PHONY: embed
embed: $(EMBED) ## build bin/embed from examples/embed: a C program that embeds a server (run: bin/embed examples/models backends)

$(EMBED): examples/embed/embed.c include/triton/core/tritonserver.h $(LIBTRITONSERVER)
	@mkdir -p $(BIN_DIR)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Iinclude -o $@ $< -L$(LIB_DIR) -ltritonserver \
		-Wl,-rpath,$(abspath $(LIB_DIR)) -pthread

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

# The packages the pure-Go run of make test leaves out: those that need cgo
# (abi, through isolation, the C API's server, the handoff program) and the
# tests of the built binary and backends, which the race run covers.
CGO_OR_BINARY_PKGS := /internal/(isolation|embedded|bench|reliability|backendtest|releasetest)(/|$$)

.PHONY: test
test: all ## run every test: pure-Go packages without cgo, everything with the race detector, abi under cgocheck2
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) test -count=1 ./core/... ./loader/... $$($(GO) list ./internal/... | grep -v -E '$(CGO_OR_BINARY_PKGS)')
	$(GO) test -race -count=1 ./...
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 ./abi/...
	$(call fuzz-each,$(FUZZTIME_TEST))

# The fuzz targets, as <package>:<target>: `make test` runs each for
# FUZZTIME_TEST, `make fuzz` for FUZZTIME. go test -fuzz takes one package
# and one target at a time; a failing input is written under the
# package's testdata/fuzz.
FUZZ_TARGETS := ./internal/frontend/httpserver:FuzzHTTPRequest ./internal/frontend/httpserver:FuzzBoundedDecodingMatchesEncodingJSON \
	./internal/frontend/httpserver:FuzzJSONStringMatchesEncodingJSON ./internal/frontend/httpserver:FuzzSharedMemoryRequest \
	./internal/frontend/httpserver:FuzzJSONTensorValuesMatchEncodingJSON ./internal/frontend/httpserver:FuzzGenerateValuesMatchEncodingJSON \
	./internal/frontend/httpserver:FuzzInferJSONSinglePassMatchesEncodingJSON ./internal/frontend/httpserver:FuzzParametersDecodeAsEncodingJSON \
	./internal/frontend/httpserver:FuzzResponseParametersMatchEncodingJSON ./internal/frontend/httpserver:FuzzParameterValueMatchesEncodingJSON \
	./internal/frontend/grpcserver:FuzzDecodeInbound ./internal/frontend/grpcserver:FuzzModelInferRequest \
	./internal/frontend/grpcserver:FuzzBoundedMapMatchesProtobuf ./internal/isolation:FuzzWorkerMessages \
	./internal/wire:FuzzDecoder ./internal/wire:FuzzSplitFrames ./core/modelconfig:FuzzParse ./core:FuzzDecodeEntry
FUZZTIME ?= 60s
FUZZTIME_TEST ?= 4s

# fuzz-each runs every fuzz target for $(1). A run that the fuzzing
# engine ends with "context deadline exceeded" and no failing input (its
# coordinator out of time on a loaded machine, not a finding) runs once more.
fuzz-each = @for t in $(FUZZ_TARGETS); do set -- $$(echo $$t | tr : ' '); \
	echo "fuzz $$1 $$2 for $(1)"; \
	out=$$($(GO) test -run '^$$' -fuzz "^$$2\$$" -fuzztime $(1) -fuzzminimizetime 50x $$1 2>&1) && { echo "$$out"; continue; }; echo "$$out"; \
	if echo "$$out" | grep -q 'context deadline exceeded' && ! echo "$$out" | grep -q 'Failing input written'; then \
		echo "fuzz $$2: the engine ran out of time without a failing input; once more"; \
		$(GO) test -run '^$$' -fuzz "^$$2\$$" -fuzztime $(1) -fuzzminimizetime 50x $$1 || exit 1; \
	else exit 1; fi; done

.PHONY: fuzz
fuzz: ## run each fuzz target (the HTTP and gRPC request decoders, shared memory, the model-config parser, cache entries, the isolation wire and a worker's messages) for FUZZTIME (default 60s)
	$(call fuzz-each,$(FUZZTIME))

.PHONY: soak
soak: all ## run the reliability suite at full scale (1000 streams x 100 requests, 35,000 pipelined requests, ...; several minutes)
	$(GO) test -count=1 -timeout 60m -v ./internal/reliability -soak

# make bench writes its run to BENCH_OUT and compares it with BENCH_BASE,
# the results kept in the repository (benchstat); copy BENCH_OUT over
# BENCH_BASE to keep a run.
BENCH_OUT ?= $(BUILD_DIR)/bench/results.txt
BENCH_BASE ?= internal/bench/results.txt

.PHONY: bench
bench: all $(BENCHSTAT) ## run the benchmarks (BENCH_COUNT times each, default 5) and `tritonhost perf` (internal/bench/perf.sh) into build/bench/results.txt, then compare with internal/bench/results.txt (benchstat)
	GO=$(GO) internal/bench/run.sh $(BENCH_OUT) $(BENCH_COUNT) $(TRITONHOST)
	$(BENCHSTAT) $(BENCH_BASE) $(BENCH_OUT)

# Each .proto file's go_package option names the package its code goes to.
.PHONY: proto
proto: ## regenerate core/configpb and internal/inferencepb from proto/*.proto (needs protoc, protoc-gen-go, protoc-gen-go-grpc)
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" protoc --proto_path=proto --go_out=. --go_opt=module=github.com/tritonhost/tritonhost \
		--go-grpc_out=. --go-grpc_opt=module=github.com/tritonhost/tritonhost proto/model_config.proto proto/grpc_service.proto

.PHONY: clean
clean: ## remove build outputs
	rm -rf $(BIN_DIR) $(LIB_DIR) $(BUILD_DIR) $(BACKENDS_DIR) $(DIST_DIR)
	rm -rf $(CACHES_DIR) $(REPOAGENTS_DIR)

.PHONY: help
help: ## list the tasks
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^[^:]*:([a-z-]+):.*## /\1\t/; s/^([a-z-]+):.*## /\1\t/' | \
		awk -F'\t' '{ printf "  make %-15s %s\n", $$1, $$2 }'
