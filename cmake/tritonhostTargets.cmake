# tritonhostTargets.cmake: tritonhost_import_targets(), which defines the
# targets backend authors link, as imported targets over files that make
# built (mk/backends.mk). CMakeLists.txt calls it for the source tree;
# tritonhostConfig.cmake and TritonCoreConfig.cmake call it for an
# installed tree, through tritonhost_import_installed_targets(). Calling
# either again does nothing.
#
#   tritonhost_import_targets(
#     [GLOBAL]                       visible to the whole build (source tree)
#     INCLUDE_DIR <dir>              holding triton/core/*.h
#     LAYER_INCLUDE_DIR <dir>        the layer's headers (*.hpp)
#     RAPIDJSON_INCLUDE_DIR <dir>    holding rapidjson/
#     STUB <file>                    the stub libtritonserver.so
#     LAYER_LIBRARY <file>)          the layer's static archive
#
# Targets:
#   TritonCore::triton-core-{serverapi,backendapi,cacheapi,repoagentapi}
#     the headers (INTERFACE); each but serverapi brings serverapi
#   TritonCore::triton-core-serverstub
#     the stub (SHARED): whoever links it records DT_NEEDED
#     libtritonserver.so, and links it with --no-as-needed, as no symbol
#     comes from it
#   tritonhost::headers
#     the headers, with C11 and C++17 (INTERFACE)
#   tritonhost::backend-utils
#     the layer (STATIC, position-independent, C++17), its headers and
#     RapidJSON's
#   tritonhost_import_installed_targets(<include dir> <library dir> <layer>)
#     the same over what CMakeLists.txt installs: the headers under
#     <include dir> (the layer's in tritonhost/, RapidJSON in
#     tritonhost/third_party/), the stub as <library dir>/stubs/
#     libtritonserver.so, the layer as <library dir>/<layer>
include_guard(GLOBAL)

function(tritonhost_import_targets)
  cmake_parse_arguments(PARSE_ARGV 0 arg "GLOBAL"
    "INCLUDE_DIR;LAYER_INCLUDE_DIR;RAPIDJSON_INCLUDE_DIR;STUB;LAYER_LIBRARY" "")
  if(TARGET tritonhost::backend-utils)
    return()
  endif()
  foreach(var IN ITEMS INCLUDE_DIR LAYER_INCLUDE_DIR RAPIDJSON_INCLUDE_DIR STUB LAYER_LIBRARY)
    if(NOT arg_${var})
      message(FATAL_ERROR "tritonhost_import_targets: ${var} is required")
    endif()
  endforeach()
  set(scope)
  if(arg_GLOBAL)
    set(scope GLOBAL)
  endif()

  foreach(api IN ITEMS serverapi backendapi cacheapi repoagentapi)
    add_library(TritonCore::triton-core-${api} INTERFACE IMPORTED ${scope})
    set_target_properties(TritonCore::triton-core-${api} PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${arg_INCLUDE_DIR}")
  endforeach()
  # tritonbackend.h includes tritonserver.h, as do the cache and agent headers.
  foreach(api IN ITEMS backendapi cacheapi repoagentapi)
    set_target_properties(TritonCore::triton-core-${api} PROPERTIES
      INTERFACE_LINK_LIBRARIES TritonCore::triton-core-serverapi)
  endforeach()

  # The stub defines nothing, so a linker that defaults to --as-needed (as
  # Debian's and Ubuntu's gcc do) would drop it; whoever links it keeps it.
  add_library(TritonCore::triton-core-serverstub SHARED IMPORTED ${scope})
  set_target_properties(TritonCore::triton-core-serverstub PROPERTIES
    IMPORTED_LOCATION "${arg_STUB}"
    IMPORTED_SONAME libtritonserver.so
    INTERFACE_LINK_OPTIONS "LINKER:--no-as-needed")

  add_library(tritonhost::headers INTERFACE IMPORTED ${scope})
  set_target_properties(tritonhost::headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${arg_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES "c_std_11;cxx_std_17")

  # RapidJSON as system headers: a backend's warnings are not for its code.
  add_library(tritonhost::backend-utils STATIC IMPORTED ${scope})
  set_target_properties(tritonhost::backend-utils PROPERTIES
    IMPORTED_LOCATION "${arg_LAYER_LIBRARY}"
    IMPORTED_LINK_INTERFACE_LANGUAGES CXX
    INTERFACE_INCLUDE_DIRECTORIES "${arg_LAYER_INCLUDE_DIR};${arg_RAPIDJSON_INCLUDE_DIR}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${arg_RAPIDJSON_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES tritonhost::headers)
endfunction()

function(tritonhost_import_installed_targets include_dir lib_dir layer)
  foreach(path IN ITEMS "${include_dir}/triton/core" "${lib_dir}/stubs/libtritonserver.so" "${lib_dir}/${layer}")
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "tritonhost: the installed package lacks ${path}")
    endif()
  endforeach()
  tritonhost_import_targets(
    INCLUDE_DIR "${include_dir}"
    LAYER_INCLUDE_DIR "${include_dir}/tritonhost"
    RAPIDJSON_INCLUDE_DIR "${include_dir}/tritonhost/third_party"
    STUB "${lib_dir}/stubs/libtritonserver.so"
    LAYER_LIBRARY "${lib_dir}/${layer}")
endfunction()
