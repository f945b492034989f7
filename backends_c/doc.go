// Package backends holds the backends that ship with tritonhost and the
// tests that build them.
//
// The code is C and C++, built by mk/backends.mk (and CMakeLists.txt):
//
//	common/     json.c (strict JSON DOM parser), backend_util.hpp (C++17
//	            helpers), exports.map (linker version script), the empty
//	            libtritonserver.so stub
//	identity/   libtriton_identity.so, in C11
//
// and, next to this directory, repeat_backend/ and square_backend/ for
// libtriton_repeat.so and libtriton_square.so, in C++17. This Go package
// only carries the tests (build_test.go): they build the libraries, check
// what each exports and imports, and run them against a mock host
// (testdata/mock_host.cc).
package backends
