# mk/plugins.mk: builds the two other plugin kinds shipped with tritonhost,
# laid out where the server looks for them (Triton's layout):
#
#   $(CACHES_DIR)/local/libtritoncache_local.so           C11, plugins/caches/local/
#   $(REPOAGENTS_DIR)/checksum/libtritonrepoagent_checksum.so
#                                                         C11, plugins/repoagents/checksum/
#
# The local cache is linked with cJSON (third_party/cjson), which it reads
# its configuration with. Each library exports only its entry points
# (plugins/caches/exports.map, plugins/repoagents/exports.map) and leaves the host
# functions as undefined symbols, which resolve against the host process
# at dlopen time.
#
# Included by the root Makefile after mk/backends.mk, whose compiler flags,
# object directory and cJSON object it shares, or run after it:
#   make -f mk/backends.mk -f mk/plugins.mk plugins [CACHES_DIR=dir] ...
# as CMake runs it (CMakeLists.txt). Targets: plugins (both), caches,
# repoagents, clean-plugins, and plugins-cmake-outputs (what CMake reads,
# below).

CACHES_DIR ?= caches
REPOAGENTS_DIR ?= repoagents

PLUGIN_CACHES := local
PLUGIN_REPOAGENTS := checksum
PLUGIN_LIBS := $(foreach c,$(PLUGIN_CACHES),$(CACHES_DIR)/$(c)/libtritoncache_$(c).so) \
	$(foreach a,$(PLUGIN_REPOAGENTS),$(REPOAGENTS_DIR)/$(a)/libtritonrepoagent_$(a).so)

THOST_PLUGINS_MK := $(lastword $(MAKEFILE_LIST))
THOST_PLUGIN_CPPFLAGS := -I$(THOST_SRC)include -isystem $(THOST_SRC)third_party/cjson -MMD -MP
THOST_PLUGIN_LDFLAGS = -shared -pthread -Wl,--version-script=$(1) $(BACKEND_EXTRA_LDFLAGS)

THOST_LOCAL_CACHE_OBJS := $(call THOST_OBJS_OF,plugins/caches/local,local_cache lru) $(THOST_CJSON_OBJ)
THOST_CHECKSUM_OBJS := $(call THOST_OBJS_OF,plugins/repoagents/checksum,checksum md5)

.PHONY: plugins caches repoagents clean-plugins
plugins: caches repoagents ## build the local response cache into caches/ and the checksum agent into repoagents/
caches: $(CACHES_DIR)/local/libtritoncache_local.so
repoagents: $(REPOAGENTS_DIR)/checksum/libtritonrepoagent_checksum.so

$(CACHES_DIR)/local/libtritoncache_local.so: $(THOST_LOCAL_CACHE_OBJS) $(THOST_SRC)plugins/caches/exports.map
	@mkdir -p $(@D)
	$(CC) $(call THOST_PLUGIN_LDFLAGS,$(THOST_SRC)plugins/caches/exports.map) -o $@ $(filter %.o,$^)

$(REPOAGENTS_DIR)/checksum/libtritonrepoagent_checksum.so: $(THOST_CHECKSUM_OBJS) $(THOST_SRC)plugins/repoagents/exports.map
	@mkdir -p $(@D)
	$(CC) $(call THOST_PLUGIN_LDFLAGS,$(THOST_SRC)plugins/repoagents/exports.map) -o $@ $(filter %.o,$^)

$(THOST_OBJ)/plugins/caches/%.o: $(THOST_SRC)plugins/caches/%.c $(THOST_CJSON_HEADER) $(THOST_PLUGINS_MK)
	@mkdir -p $(@D)
	$(CC) $(THOST_PLUGIN_CPPFLAGS) $(THOST_CFLAGS) -c -o $@ $<

$(THOST_OBJ)/plugins/repoagents/%.o: $(THOST_SRC)plugins/repoagents/%.c $(THOST_PLUGINS_MK)
	@mkdir -p $(@D)
	$(CC) $(THOST_PLUGIN_CPPFLAGS) $(THOST_CFLAGS) -c -o $@ $<

-include $(THOST_LOCAL_CACHE_OBJS:.o=.d) $(THOST_CHECKSUM_OBJS:.o=.d)

# ---- for CMake -----------------------------------------------------------
# As backends-cmake-outputs (mk/backends.mk): the plugins' names and the
# directories they are built into, for CMake's imported targets.
.PHONY: plugins-cmake-outputs
plugins-cmake-outputs:
	@echo 'caches=$(PLUGIN_CACHES)'
	@echo 'caches_dir=$(abspath $(CACHES_DIR))'
	@echo 'repoagents=$(PLUGIN_REPOAGENTS)'
	@echo 'repoagents_dir=$(abspath $(REPOAGENTS_DIR))'

clean-plugins: ## remove the built caches and repository agents and their objects
	rm -f $(PLUGIN_LIBS)
	rm -rf $(THOST_OBJ)/plugins
