#!/usr/bin/env bash
# mk/dist.sh: the release artifacts `make dist` builds, from the repository
# root, after make has built the server and the backends:
#
#   $DIST_DIR/tritonhost-$VERSION-linux-<arch>.tar.gz
#       tritonhost-$VERSION-linux-<arch>/
#         bin/tritonhost
#         backends/<name>/libtriton_<name>.so     (finds them by itself)
#         caches/local/libtritoncache_local.so, repoagents/checksum/
#           libtritonrepoagent_checksum.so        (the same)
#         include/triton/core/, include/tritonhost/
#         lib/libtritonserver.so                  the C API, for embedding
#         lib/cmake/{tritonhost,TritonCore}/, lib/stubs/libtritonserver.so,
#         lib/libtritonhost-backend-utils.a         (CMake's install)
#         share/doc/tritonhost/third_party/         licenses
#         examples/, LICENSE, README.md, CHANGELOG.md, docs/ (the README's
#           links)
#   $DIST_DIR/tritonhost_<deb version>-1_<arch>.deb
#       the same files in Debian's places (packaging/nfpm.yaml)
#
# The headers, the layer, the stub and the CMake package files are what
# `cmake --install` writes (CMakeLists.txt), so find_package works on the
# unpacked tarball (CMAKE_PREFIX_PATH=<dir>) and on the installed package.
#
# Environment (mk/release.mk sets it): VERSION, BIN, LIBTRITONSERVER, BACKENDS_DIR,
# DIST_BACKENDS, CACHES_DIR, REPOAGENTS_DIR, BUILD_DIR, DIST_DIR, NFPM, GO.
# Needs cmake, tar, gzip.
set -euo pipefail

: "${VERSION:?}" "${BIN:?}" "${LIBTRITONSERVER:?}" "${BACKENDS_DIR:?}" "${DIST_BACKENDS:?}"
: "${BUILD_DIR:?}" "${DIST_DIR:?}" "${NFPM:?}"
GO=${GO:-go}
root=$(pwd)
nfpm=$(cd "$(dirname "$NFPM")" && pwd)/$(basename "$NFPM")

# logged LOG CMD...: runs CMD with its output in LOG, shown if it fails.
logged() {
  local log=$1
  shift
  if ! "$@" >>"$log" 2>&1; then
    cat "$log" >&2
    echo "dist: failed: $*" >&2
    exit 1
  fi
}

for tool in cmake tar gzip; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "dist: $tool not found (on Debian: apt-get install $tool)" >&2
    exit 1
  fi
done

arch=$("$GO" env GOARCH)
name="tritonhost-$VERSION-linux-$arch"
# "_": the go command leaves it out of ./... (the examples hold Go files).
work=$(mkdir -p "$BUILD_DIR/_dist" && cd "$BUILD_DIR/_dist" && pwd)
stage="$work/stage"
dist=$(mkdir -p "$DIST_DIR" && cd "$DIST_DIR" && pwd)
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/backends"

echo "dist: CMake package, headers and the C++ layer"
log="$work/cmake.log"
: >"$log"
# CMake runs make (mk/backends.mk) for the layer and the stub; pointed at
# this build's BUILD_DIR, it finds them up to date and installs the very
# files the shipped backends were linked with.
make_build=$(cd "$BUILD_DIR" && pwd)
logged "$log" cmake -S "$root" -B "$work/cmake" -DTRITONHOST_BUILD_BACKENDS=OFF \
  -DTRITONHOST_MAKE_BUILD_DIR="$make_build" -DCMAKE_INSTALL_LIBDIR=lib
logged "$log" cmake --build "$work/cmake" --parallel
logged "$log" cmake --install "$work/cmake" --prefix "$stage"

echo "dist: server, backends ($DIST_BACKENDS), examples, licenses"
install -m 0755 "$BIN" "$stage/bin/tritonhost"
install -D -m 0644 "$LIBTRITONSERVER" "$stage/lib/libtritonserver.so"
for b in $DIST_BACKENDS; do
  install -D -m 0644 "$BACKENDS_DIR/$b/libtriton_$b.so" "$stage/backends/$b/libtriton_$b.so"
done
install -D -m 0644 "${CACHES_DIR:-caches}/local/libtritoncache_local.so" \
  "$stage/caches/local/libtritoncache_local.so"
install -D -m 0644 "${REPOAGENTS_DIR:-repoagents}/checksum/libtritonrepoagent_checksum.so" \
  "$stage/repoagents/checksum/libtritonrepoagent_checksum.so"
# Tracked files only: no build outputs from the examples' directories.
git ls-files -z examples | xargs -0 cp --parents -t "$stage"
install -m 0644 LICENSE README.md CHANGELOG.md "$stage/"
# The documents the README links to, at the same place beside it.
mkdir -p "$stage/docs"
install -m 0644 docs/*.md "$stage/docs/"
install -D -m 0644 third_party/cjson/LICENSE "$stage/share/doc/tritonhost/third_party/cjson/LICENSE"

# File times of the commit, so that two builds of one commit differ less.
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)

echo "dist: $DIST_DIR/$name.tar.gz"
rm -f "$dist"/tritonhost-*-linux-*.tar.gz
tar -C "$work" --transform "s,^stage,$name," --sort=name --owner=0 --group=0 \
  --numeric-owner --mtime="@$epoch" -cf - stage | gzip -9n >"$dist/$name.tar.gz"

deb_version=$(bash "$root/mk/debversion.sh" "$VERSION")
echo "dist: Debian package $deb_version ($arch)"
rm -f "$dist"/tritonhost_*.deb
(cd "$stage" && SOURCE_DATE_EPOCH=$epoch THOST_DEB_VERSION=$deb_version THOST_DEB_ARCH=$arch \
  "$nfpm" package --config "$root/packaging/nfpm.yaml" --packager deb --target "$dist/")
ls -l "$dist"
