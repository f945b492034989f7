# mk/release.mk: versions, linters and release packages, included by the
# root Makefile.
#
#   VERSION   what builds are stamped with: `git describe --tags --always
#             --dirty` (v0.1.0, v0.1.0-3-g1a2b3c4, v0.1.0-dirty), "dev"
#             outside a git checkout; `make VERSION=v0.1.0` overrides it
#             (a container build from a source tree without .git).
#   COMMIT    `git rev-parse HEAD`, "unknown" outside a checkout.
#   lint      mk/lint.sh: gofmt, go vet, staticcheck, clang-format, on
#             $(LINT_DIR) (default: this checkout).
#   dist      mk/dist.sh: $(DIST_DIR)/tritonhost-$(VERSION)-linux-<arch>.tar.gz
#             and $(DIST_DIR)/tritonhost_<deb version>_<arch>.deb (nfpm,
#             packaging/nfpm.yaml).
#   tools     the pinned staticcheck, nfpm and benchstat, go-installed
#             into $(TOOLS_DIR); lint, dist and bench install the one they
#             need.

ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null)
endif
VERSION := $(or $(VERSION),dev)
ifeq ($(origin COMMIT),undefined)
COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
endif
COMMIT := $(or $(COMMIT),unknown)

# Linked into cmd/tritonhost (version.go).
GO_LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# Rewritten only when VERSION or COMMIT changes, so that the binary is
# relinked for a new tag even when no source changed.
VERSION_STAMP := $(BUILD_DIR)/version.stamp
$(VERSION_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION) $(COMMIT)' | cmp -s - $@ || echo '$(VERSION) $(COMMIT)' > $@

.PHONY: FORCE
FORCE:

# Pinned tool versions (go install); all build with Go 1.26.
STATICCHECK_VERSION := v0.8.2
NFPM_VERSION := v2.45.2
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
TOOLS_DIR ?= $(BUILD_DIR)/tools
STATICCHECK := $(TOOLS_DIR)/staticcheck-$(STATICCHECK_VERSION)
NFPM := $(TOOLS_DIR)/nfpm-$(NFPM_VERSION)
BENCHSTAT := $(TOOLS_DIR)/benchstat-$(BENCHSTAT_VERSION)

# go install writes <name> into GOBIN; the version goes into the file name
# so that a new pin installs anew.
$(STATICCHECK):
	@mkdir -p $(@D)
	GOBIN=$(abspath $(@D)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(@D)/staticcheck $@

$(NFPM):
	@mkdir -p $(@D)
	GOBIN=$(abspath $(@D)) $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION)
	mv $(@D)/nfpm $@

$(BENCHSTAT):
	@mkdir -p $(@D)
	GOBIN=$(abspath $(@D)) $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)
	mv $(@D)/benchstat $@

.PHONY: tools lint-tools
tools: lint-tools $(NFPM) $(BENCHSTAT) ## install the pinned staticcheck, nfpm and benchstat into build/tools
lint-tools: $(STATICCHECK)

.PHONY: version
version: ## print the version builds are stamped with
	@echo $(VERSION)

# The checkout lint checks; the tests point it at scratch repositories.
LINT_DIR ?= .

.PHONY: lint
lint: $(STATICCHECK) ## gofmt, go vet, staticcheck and clang-format on every source outside third_party/
	cd $(LINT_DIR) && GO=$(GO) STATICCHECK=$(abspath $(STATICCHECK)) bash $(abspath mk/lint.sh)

DIST_DIR ?= dist
# The backends a release ships; conformance is a test probe and stays out.
DIST_BACKENDS := repeat square addsub bls sequence identity
DIST_BACKEND_LIBS := $(foreach b,$(DIST_BACKENDS),$(BACKENDS_DIR)/$(b)/libtriton_$(b).so)

.PHONY: dist
dist: $(TRITONHOST) $(LIBTRITONSERVER) $(DIST_BACKEND_LIBS) $(PLUGIN_LIBS) $(NFPM) ## the release tarball and Debian package, into dist/
	CACHES_DIR='$(CACHES_DIR)' REPOAGENTS_DIR='$(REPOAGENTS_DIR)' LIBTRITONSERVER='$(LIBTRITONSERVER)' \
	GO=$(GO) NFPM=$(NFPM) VERSION='$(VERSION)' BIN='$(TRITONHOST)' \
		BACKENDS_DIR='$(BACKENDS_DIR)' DIST_BACKENDS='$(DIST_BACKENDS)' \
		BUILD_DIR='$(BUILD_DIR)' DIST_DIR='$(DIST_DIR)' bash mk/dist.sh
