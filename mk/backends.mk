# mk/backends.mk: builds the backends shipped with tritonhost.
#
#   $(BACKENDS_DIR)/repeat/libtriton_repeat.so      C++17, repeat_backend/
#   $(BACKENDS_DIR)/square/libtriton_square.so      C++17, square_backend/
#   $(BACKENDS_DIR)/addsub/libtriton_addsub.so      C++17, backends_c/addsub/
#   $(BACKENDS_DIR)/bls/libtriton_bls.so            C++17, backends_c/bls/
#   $(BACKENDS_DIR)/sequence/libtriton_sequence.so  C++17, backends_c/sequence/
#   $(BACKENDS_DIR)/identity/libtriton_identity.so  C11,   backends_c/identity/
#   $(BACKENDS_DIR)/conformance/libtriton_conformance.so
#                                                   C11,   backends_c/conformance/
#   $(BACKENDS_DIR)/modelcontrol/libtriton_modelcontrol.so
#                                                   C11,   backends_c/modelcontrol/
#
# The C++ backends are linked with the C++ backend layer, backends_c/layer/
# (a static archive; RapidJSON's headers from third_party/rapidjson), the C
# ones with cJSON (third_party/cjson). Every library is linked with the
# version script backends_c/link/exports.map.
#
# Included by the root Makefile, or run alone from anywhere:
#   make -f mk/backends.mk [BACKENDS_DIR=dir] [BUILD_DIR=dir]
# Targets: backends (the default when run alone), backend-layer (the layer's
# archive), backend-stub (the stub), backends-sanitized, clean-backends,
# and backends-cmake-outputs (what CMake reads, below).
# Needs only make, gcc and g++ (and ar, which comes with them).
#
# This file is the one build of the repository's C and C++ code: its
# sources and compiler flags are named here and nowhere else. CMake
# (CMakeLists.txt) runs this file for the layer, the stub and the backends,
# into its own build tree (BUILD_DIR=<build>/make, BACKENDS_DIR=
# <build>/backends, CC and CXX its compilers), and hands the files it
# builds to backend authors as imported targets; at configure time it
# reads their paths from `backends-cmake-outputs`.
#
# Objects and dependency files go under $(BUILD_DIR)/backends, at their
# sources' paths; headers are tracked through gcc's -MMD, so editing a
# header rebuilds what includes it (the vendored headers, which -MMD leaves
# out as system headers, are named in the rules). Each library exports only
# TRITONBACKEND_* (linker version script). The C++ backends are linked as
# Triton links its backends, against an empty stub
# $(BUILD_DIR)/stub/libtritonserver.so, so they carry DT_NEEDED
# libtritonserver.so, as is modelcontrol (a C test backend that uses the
# server as Triton's python backend does); identity and conformance are
# linked without it and leave the host functions as plain undefined
# symbols. Both resolve against the host process at dlopen time.

# This file's path; taken before any include can change MAKEFILE_LIST.
THOST_BACKENDS_MK := $(lastword $(MAKEFILE_LIST))
THOST_ROOT := $(patsubst %/,%,$(dir $(abspath $(dir $(abspath $(THOST_BACKENDS_MK))))))
# Sources are named relative to the current directory when it is the repo
# root (short compiler messages), absolutely otherwise.
THOST_SRC := $(if $(filter $(CURDIR),$(THOST_ROOT)),,$(THOST_ROOT)/)

# Remember the includer's default goal (see the end of this file).
THOST_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)

# make predefines CC=cc and CXX=g++; only those built-in values give way.
ifeq ($(origin CC),default)
CC := gcc
endif
ifeq ($(origin CXX),default)
CXX := g++
endif
CC ?= gcc
CXX ?= g++
BACKENDS_DIR ?= backends
BUILD_DIR ?= build

# Extra flags for the backends only (e.g. -fsanitize=address); the plain
# CFLAGS/CXXFLAGS/LDFLAGS of an including Makefile are deliberately unused.
BACKEND_EXTRA_CFLAGS ?=
BACKEND_EXTRA_CXXFLAGS ?=
BACKEND_EXTRA_LDFLAGS ?=

BACKEND_NAMES := repeat square addsub bls sequence identity conformance modelcontrol
BACKEND_LIBS := $(foreach b,$(BACKEND_NAMES),$(BACKENDS_DIR)/$(b)/libtriton_$(b).so)

THOST_OBJ := $(BUILD_DIR)/backends
THOST_STUB := $(BUILD_DIR)/stub/libtritonserver.so
THOST_EXPORTS_MAP := $(THOST_SRC)backends_c/link/exports.map

# The layer's headers and RapidJSON's: what code on the layer includes
# (CMake's tritonhost::backend-utils gives them to backend authors).
THOST_LAYER_INCLUDE := $(THOST_SRC)backends_c/layer
THOST_RAPIDJSON_INCLUDE := $(THOST_SRC)third_party/rapidjson/include
# The C++ backends: the layer's headers, and RapidJSON's as system headers.
THOST_CXX_CPPFLAGS := -I$(THOST_SRC)include -I$(THOST_LAYER_INCLUDE) \
	-isystem $(THOST_RAPIDJSON_INCLUDE) -MMD -MP
# The C backends: our json_int64.h, and cJSON's header as a system header
# (-isystem), so that -Werror is for our code only.
THOST_C_CPPFLAGS := -I$(THOST_SRC)include -I$(THOST_SRC)backends_c \
	-isystem $(THOST_SRC)third_party/cjson -MMD -MP
THOST_COMMON_FLAGS := -O2 -g -fPIC -Wall -Wextra -Werror -pthread
THOST_CFLAGS := -std=c11 $(THOST_COMMON_FLAGS) $(BACKEND_EXTRA_CFLAGS)
# Vendored sources (third_party/): our flags less the warnings.
THOST_THIRD_PARTY_CFLAGS := -std=c11 -O2 -g -fPIC -pthread $(BACKEND_EXTRA_CFLAGS)
THOST_CXXFLAGS := -std=c++17 $(THOST_COMMON_FLAGS) $(BACKEND_EXTRA_CXXFLAGS)
THOST_LDFLAGS := -shared -pthread -Wl,--version-script=$(THOST_EXPORTS_MAP) \
	$(BACKEND_EXTRA_LDFLAGS)
# The stub as a DT_NEEDED entry even though no symbol comes from it.
THOST_STUB_LIBS := -Wl,--no-as-needed -L$(BUILD_DIR)/stub -ltritonserver \
	-Wl,--as-needed
# repeat and square leave detached response threads that finish the last
# instructions of their body after ModelInstanceFinalize has returned;
# -z nodelete keeps their code mapped even if the host dlcloses them.
THOST_NODELETE := -Wl,-z,nodelete

# Objects mirror their sources' paths under $(THOST_OBJ).
THOST_OBJS_OF = $(patsubst %,$(THOST_OBJ)/$(1)/%.o,$(2))

# The C++ backend layer, as a static archive of position-independent code:
# each backend takes the objects it uses; CMake installs it for backend
# authors as lib/libtritonhost-backend-utils.a (tritonhost::backend-utils).
THOST_LAYER_OBJS := $(call THOST_OBJS_OF,backends_c/layer,json_value \
	model_config backend_model backend_model_instance backend_io request_batch \
	async_request_batch)
THOST_LAYER_LIB := $(THOST_OBJ)/backends_c/layer/libtritonhost-backend-utils.a
THOST_CJSON_OBJ := $(THOST_OBJ)/third_party/cjson/cJSON.o

THOST_REPEAT_OBJS := $(call THOST_OBJS_OF,repeat_backend,repeat)
THOST_SQUARE_OBJS := $(call THOST_OBJS_OF,square_backend,square)
THOST_ADDSUB_OBJS := $(call THOST_OBJS_OF,backends_c/addsub,addsub)
THOST_BLS_OBJS := $(call THOST_OBJS_OF,backends_c/bls,bls bls_call callee_check cpu_outputs)
THOST_SEQUENCE_OBJS := $(call THOST_OBJS_OF,backends_c/sequence,sequence)
THOST_IDENTITY_OBJS := $(call THOST_OBJS_OF,backends_c/identity,identity \
	identity_config identity_execute messages) $(THOST_CJSON_OBJ)
THOST_CONFORMANCE_OBJS := $(call THOST_OBJS_OF,backends_c/conformance,conformance \
	kinds kind_main kind_thread kind_reschedule kind_cancel report checks_server \
	checks_objects checks_backend checks_model checks_instance checks_config \
	checks_request checks_input checks_response checks_statistics checks_inprocess \
	checks_inprocess_tensors checks_model_control inprocess_callbacks kind_inprocess kind_peer) $(THOST_CJSON_OBJ)
THOST_MODELCONTROL_OBJS := $(call THOST_OBJS_OF,backends_c/modelcontrol,modelcontrol \
	modelcontrol_bls) $(THOST_CJSON_OBJ)
THOST_ALL_OBJS := $(sort $(THOST_LAYER_OBJS) $(THOST_REPEAT_OBJS) $(THOST_SQUARE_OBJS) \
	$(THOST_ADDSUB_OBJS) $(THOST_BLS_OBJS) $(THOST_SEQUENCE_OBJS) $(THOST_IDENTITY_OBJS) $(THOST_CONFORMANCE_OBJS) \
	$(THOST_MODELCONTROL_OBJS))

# -MMD leaves out system headers, so the vendored ones are named here.
THOST_CJSON_HEADER := $(THOST_SRC)third_party/cjson/cJSON.h
THOST_RAPIDJSON_HEADERS := $(wildcard $(THOST_SRC)third_party/rapidjson/include/rapidjson/*.h \
	$(THOST_SRC)third_party/rapidjson/include/rapidjson/*/*.h)

.PHONY: backends backend-layer backend-stub clean-backends
backends: $(BACKEND_LIBS)
backend-layer: $(THOST_LAYER_LIB)
backend-stub: $(THOST_STUB)

# ---- libraries -----------------------------------------------------------

$(BACKENDS_DIR)/repeat/libtriton_repeat.so: $(THOST_REPEAT_OBJS) $(THOST_LAYER_LIB) $(THOST_STUB) $(THOST_EXPORTS_MAP)
	@mkdir -p $(@D)
	$(CXX) $(THOST_LDFLAGS) $(THOST_NODELETE) -o $@ $(filter %.o %.a,$^) $(THOST_STUB_LIBS)

$(BACKENDS_DIR)/square/libtriton_square.so: $(THOST_SQUARE_OBJS) $(THOST_LAYER_LIB) $(THOST_STUB) $(THOST_EXPORTS_MAP)
	@mkdir -p $(@D)
	$(CXX) $(THOST_LDFLAGS) $(THOST_NODELETE) -o $@ $(filter %.o %.a,$^) $(THOST_STUB_LIBS)

# addsub starts no threads, so it needs no -z nodelete.
$(BACKENDS_DIR)/addsub/libtriton_addsub.so: $(THOST_ADDSUB_OBJS) $(THOST_LAYER_LIB) $(THOST_STUB) $(THOST_EXPORTS_MAP)
	@mkdir -p $(@D)
	$(CXX) $(THOST_LDFLAGS) -o $@ $(filter %.o %.a,$^) $(THOST_STUB_LIBS)

# bls's callbacks run on the server's threads until the instance's finalizer
# has seen the last one return; -z nodelete keeps their code mapped for the
# last instructions after that.
$(BACKENDS_DIR)/bls/libtriton_bls.so: $(THOST_BLS_OBJS) $(THOST_LAYER_LIB) $(THOST_STUB) $(THOST_EXPORTS_MAP)
	@mkdir -p $(@D)
	$(CXX) $(THOST_LDFLAGS) $(THOST_NODELETE) -o $@ $(filter %.o %.a,$^) $(THOST_STUB_LIBS)

# sequence, like addsub, starts no threads.
$(BACKENDS_DIR)/sequence/libtriton_sequence.so: $(THOST_SEQUENCE_OBJS) $(THOST_LAYER_LIB) $(THOST_STUB) $(THOST_EXPORTS_MAP)
	@mkdir -p $(@D)
	$(CXX) $(THOST_LDFLAGS) -o $@ $(filter %.o %.a,$^) $(THOST_STUB_LIBS)

$(BACKENDS_DIR)/identity/libtriton_identity.so: $(THOST_IDENTITY_OBJS) $(THOST_EXPORTS_MAP)
	@mkdir -p $(@D)
	$(CC) $(THOST_LDFLAGS) -o $@ $(filter %.o,$^)

$(BACKENDS_DIR)/conformance/libtriton_conformance.so: $(THOST_CONFORMANCE_OBJS) $(THOST_EXPORTS_MAP)
	@mkdir -p $(@D)
	$(CC) $(THOST_LDFLAGS) -o $@ $(filter %.o,$^)

# Linked against the stub, as python backend is.
$(BACKENDS_DIR)/modelcontrol/libtriton_modelcontrol.so: $(THOST_MODELCONTROL_OBJS) $(THOST_STUB) $(THOST_EXPORTS_MAP)
	@mkdir -p $(@D)
	$(CC) $(THOST_LDFLAGS) -o $@ $(filter %.o,$^) $(THOST_STUB_LIBS)

# The soname is the name a backend records in DT_NEEDED, whether it is
# linked with -ltritonserver (here) or by the stub's path (CMake).
$(THOST_STUB): $(THOST_SRC)backends_c/link/tritonserver_stub.c $(THOST_BACKENDS_MK)
	@mkdir -p $(@D)
	$(CC) -shared -fPIC -Wl,-soname,libtritonserver.so -o $@ $<

$(THOST_LAYER_LIB): $(THOST_LAYER_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# ---- objects -------------------------------------------------------------
# Each object also depends on this file, so changed flags rebuild it.

# C backends, on cJSON.
$(THOST_OBJ)/backends_c/%.o: $(THOST_SRC)backends_c/%.c $(THOST_CJSON_HEADER) $(THOST_BACKENDS_MK)
	@mkdir -p $(@D)
	$(CC) $(THOST_C_CPPFLAGS) $(THOST_CFLAGS) -c -o $@ $<

$(THOST_CJSON_OBJ): $(THOST_SRC)third_party/cjson/cJSON.c $(THOST_CJSON_HEADER) $(THOST_BACKENDS_MK)
	@mkdir -p $(@D)
	$(CC) $(THOST_THIRD_PARTY_CFLAGS) -c -o $@ $<

# C++: the layer and the backends on it (backends_c/, repeat_backend/,
# square_backend/).
$(THOST_OBJ)/%.o: $(THOST_SRC)%.cc $(THOST_RAPIDJSON_HEADERS) $(THOST_BACKENDS_MK)
	@mkdir -p $(@D)
	$(CXX) $(THOST_CXX_CPPFLAGS) $(THOST_CXXFLAGS) -c -o $@ $<

-include $(THOST_ALL_OBJS:.o=.d)

# ---- the backends under the address and undefined-behaviour sanitizers ----
# The same rules, run again into $(BUILD_DIR)/sanitized with the sanitizers'
# flags: what internal/backendtest runs under the real server (with the
# sanitizer runtime preloaded: docs/backends.md) and links its test programs
# with.
THOST_SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SANITIZED_BUILD_DIR := $(BUILD_DIR)/sanitized

.PHONY: backends-sanitized
backends-sanitized: ## build the backends with -fsanitize=address,undefined into build/sanitized/backends
	+$(MAKE) --no-print-directory -f $(abspath $(THOST_BACKENDS_MK)) BUILD_DIR='$(SANITIZED_BUILD_DIR)' \
		BACKENDS_DIR='$(SANITIZED_BUILD_DIR)/backends' BACKEND_EXTRA_CFLAGS='$(THOST_SANITIZE_FLAGS)' \
		BACKEND_EXTRA_CXXFLAGS='$(THOST_SANITIZE_FLAGS)' BACKEND_EXTRA_LDFLAGS='$(THOST_SANITIZE_FLAGS)' \
		backends backend-layer

# ---- for CMake -----------------------------------------------------------
# What this file builds for the BUILD_DIR and BACKENDS_DIR it is given, as
# name=value lines (absolute paths): CMakeLists.txt reads them at
# configure time and makes its imported targets and install rules of them.
.PHONY: backends-cmake-outputs
backends-cmake-outputs:
	@echo 'layer=$(abspath $(THOST_LAYER_LIB))'
	@echo 'layer_include=$(abspath $(THOST_LAYER_INCLUDE))'
	@echo 'rapidjson_include=$(abspath $(THOST_RAPIDJSON_INCLUDE))'
	@echo 'stub=$(abspath $(THOST_STUB))'
	@echo 'exports_map=$(abspath $(THOST_EXPORTS_MAP))'
	@echo 'backends=$(BACKEND_NAMES)'
	@echo 'backends_dir=$(abspath $(BACKENDS_DIR))'

clean-backends: ## remove the built backends and their objects
	rm -f $(BACKEND_LIBS) $(THOST_STUB)
	rm -rf $(THOST_OBJ) $(SANITIZED_BUILD_DIR)

# Run alone, build the backends by default; included, leave the includer's
# default goal as it was (empty means: its first target, as usual).
ifeq ($(firstword $(MAKEFILE_LIST)),$(THOST_BACKENDS_MK))
.DEFAULT_GOAL := backends
else
.DEFAULT_GOAL := $(THOST_SAVED_DEFAULT_GOAL)
endif
