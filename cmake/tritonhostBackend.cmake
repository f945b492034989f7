# tritonhostBackend.cmake: tritonhost_add_backend(), which builds a backend
# author's library the way tritonhost and Triton load it, against the
# imported targets of tritonhostTargets.cmake. (The backends that ship with
# tritonhost are built by make, mk/backends.mk.)
#
#   tritonhost_add_backend(<name>
#     SOURCES <file>...          C and/or C++ sources
#     [LINK <target>...]         more libraries to link (PRIVATE)
#     [NO_STUB]                  do not link the libtritonserver.so stub
#     [NODELETE]                 link with -z nodelete (for backends whose
#                                detached threads may outlive Finalize)
#     [INSTALL_DIR <dir>])       default: ${TRITONHOST_BACKEND_INSTALL_DIR}
#                                or "backends", + /<name>
#
# Creates target triton-<name>-backend, output
# ${CMAKE_BINARY_DIR}/backends/<name>/libtriton_<name>.so, compiled with
# -Wall -Wextra -Werror (C11 / C++17), exporting only TRITONBACKEND_*
# (linker version script), with no RPATH. Unless NO_STUB, it is linked
# against TritonCore::triton-core-serverstub so it records DT_NEEDED
# libtritonserver.so; either way the TRITON* functions stay undefined and
# are resolved against the host process when it dlopens the library.
include_guard(GLOBAL)

# The version script, the one mk/backends.mk links the project's backends
# with: in the source tree CMakeLists.txt sets it (from make); once
# installed, it sits next to this file.
get_property(_tritonhost_map_set GLOBAL PROPERTY TRITONHOST_EXPORTS_MAP SET)
if(NOT _tritonhost_map_set)
  set_property(GLOBAL PROPERTY TRITONHOST_EXPORTS_MAP
    "${CMAKE_CURRENT_LIST_DIR}/exports.map")
endif()
unset(_tritonhost_map_set)

function(tritonhost_add_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_STUB;NODELETE" "INSTALL_DIR" "SOURCES;LINK")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "tritonhost_add_backend(${name}): SOURCES is required")
  endif()
  if(NOT arg_INSTALL_DIR)
    if(DEFINED TRITONHOST_BACKEND_INSTALL_DIR)
      set(arg_INSTALL_DIR "${TRITONHOST_BACKEND_INSTALL_DIR}/${name}")
    else()
      set(arg_INSTALL_DIR "backends/${name}")
    endif()
  endif()
  get_property(map GLOBAL PROPERTY TRITONHOST_EXPORTS_MAP)
  set(target triton-${name}-backend)

  add_library(${target} SHARED ${arg_SOURCES})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME triton_${name}
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/backends/${name}"
    C_STANDARD 11
    C_STANDARD_REQUIRED ON
    C_EXTENSIONS OFF
    CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    SKIP_BUILD_RPATH ON
    LINK_DEPENDS "${map}")
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  target_link_options(${target} PRIVATE "LINKER:--version-script=${map}")
  if(arg_NODELETE)
    target_link_options(${target} PRIVATE "LINKER:-z,nodelete")
  endif()

  set(THREADS_PREFER_PTHREAD_FLAG ON)  # -pthread; local to this function
  find_package(Threads REQUIRED)

  target_link_libraries(${target} PRIVATE
    TritonCore::triton-core-backendapi Threads::Threads ${arg_LINK})
  if(NOT arg_NO_STUB)
    # Keep the stub as DT_NEEDED although no symbol comes from it.
    target_link_libraries(${target} PRIVATE
      "-Wl,--no-as-needed" TritonCore::triton-core-serverstub "-Wl,--as-needed")
  endif()

  install(TARGETS ${target} LIBRARY DESTINATION "${arg_INSTALL_DIR}")
endfunction()
