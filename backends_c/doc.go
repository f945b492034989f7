// Package backends holds the backends that ship with tritonhost and the
// tests that build them.
//
// The code is C and C++, built by mk/backends.mk (and CMakeLists.txt):
//
//	common/       backend_util.hpp (C++17 helpers), json_value (JsonValue,
//	              over RapidJSON), a C++ layer in Triton's style (backend_model,
//	              backend_model_instance, backend_io, request_batch),
//	              exports.map (linker version script), the empty
//	              libtritonserver.so stub
//	identity/     libtriton_identity.so, in C11: Triton's identity behaviour
//	addsub/       libtriton_addsub.so, in C++17 on the layer in common/:
//	              sum and difference, Triton's "simple" example model
//	conformance/  libtriton_conformance.so, in C11: calls every host
//	              function with good and bad arguments and reports what it
//	              saw (driven by loader/conformance_test.go)
//
// and, next to this directory, repeat_backend/ and square_backend/ for
// libtriton_repeat.so and libtriton_square.so, in C++17. This Go package
// only carries the tests (build_test.go): they build the libraries, check
// what each exports and imports, and run them against a mock host
// (testdata/mock_host.cc).
package backends
