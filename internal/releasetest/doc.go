// Package releasetest tests how tritonhost is released. It holds only
// tests, of the Makefile's release tasks (mk/release.mk) and the scripts
// behind them:
//
//   - make lint (mk/lint.sh) passes on clean scratch checkouts and fails,
//     naming the file, on a misformatted C, C++ or Go file, on a go vet or a
//     staticcheck finding; vendored code (third_party/) and ignored files
//     are left alone;
//   - the version: a build stamped with `make VERSION=...` prints it in
//     `tritonhost version` and reports it in ServerMetadata; a build in a
//     tagged checkout prints the tag, then the commits since, then -dirty;
//   - make dist: the tarball holds what a release ships, and its server
//     serves its examples with the backends beside it; the Debian package,
//     unpacked into a scratch root with dpkg -x, runs (`tritonhost version`,
//     and serving the packaged examples with the packaged backends), and a
//     backend author's CMake project builds against it with find_package;
//     mk/debversion.sh orders versions as dpkg does.
//
// The tests skip, saying why, where a tool they need (git, clang-format,
// cmake, dpkg) is missing, except under CI (CI set in the environment),
// whose .ci/run installs them all: there they fail.
package releasetest
