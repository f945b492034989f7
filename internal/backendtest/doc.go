// Package backendtest tests the backends that ship with tritonhost and
// their build. It holds only tests; the backends are C and C++ shared
// libraries built by mk/backends.mk (make), which CMakeLists.txt runs:
//
//	backends_c/identity/     libtriton_identity.so, C11: Triton's identity model
//	backends_c/conformance/  libtriton_conformance.so, C11: calls every host
//	                         function with good and bad arguments and reports
//	                         what it saw (driven by loader/conformance_test.go)
//	backends_c/addsub/     libtriton_addsub.so, C++17 on the layer: sum and
//	                         difference, Triton's "simple", "simple_int8" and
//	                         "simple_string" example models
//	backends_c/sequence/   libtriton_sequence.so, C++17 on the layer: Triton's
//	                         "simple_sequence" example model (START and READY
//	                         control inputs)
//	backends_c/bls/        libtriton_bls.so, C++17 on the layer: calls another
//	                         model through the in-process API (TRITONSERVER_*)
//	repeat_backend/          libtriton_repeat.so, C++17, decoupled
//	square_backend/          libtriton_square.so, C++17, decoupled
//	backends_c/layer/      the C++ backend layer in Triton's style, installed
//	                         with the CMake package as tritonhost::backend-utils
//	backends_c/link/            what every backend links with: exports.map (the
//	                         linker version script) and the empty
//	                         libtritonserver.so stub
//	third_party/             cJSON (in the C backends) and RapidJSON (in the
//	                         layer), vendored
//
// The tests build the libraries with make and through CMake, check what
// each exports and imports, install the CMake package and build a backend
// author's project against it and against the source tree
// (testdata/cmake_consumer), run repeat, square and identity built with the
// address and undefined-behaviour sanitizers in the real server
// (sanitize_test.go), show that a backend touching a released request dies
// of it there (testdata/touch_after_release.c), test the layer's JSON
// reading (testdata/json_value_test.cc), and check the vendored files
// against their recorded SHA-256 sums.
package backendtest
