#!/usr/bin/env bash
# mk/lint.sh: the style checks `make lint` runs, on the git checkout in the
# current directory (a Go module with a .clang-format at its root):
#
#   gofmt -l                     every .go file prints nothing
#   go vet ./...
#   staticcheck ./...            $STATICCHECK, the pinned one make installs
#   clang-format --dry-run -Werror, with ./.clang-format, on every .c, .cc,
#                                .h and .hpp
#
# Files are those git would commit (tracked, or untracked and not
# ignored), outside third_party/ (vendored code keeps its upstream style).
# Every check runs; the script exits 1 if any failed, naming the files.
# Environment: GO (default go), STATICCHECK (default staticcheck),
# CLANG_FORMAT (default clang-format).
set -uo pipefail

GO=${GO:-go}
STATICCHECK=${STATICCHECK:-staticcheck}
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
failed=()

# sources PATTERN...: the existing files git would commit that match,
# outside third_party/, one per line.
sources() {
  git ls-files -z --cached --others --exclude-standard -- "$@" ':!:third_party/' |
    while IFS= read -r -d '' f; do
      if [ -f "$f" ]; then printf '%s\n' "$f"; fi
    done
}

# need TOOL HINT: fails the check that needs TOOL if it is missing.
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "lint: $1 not found; $2" >&2
    return 1
  fi
}

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "lint: $(pwd) is not a git checkout" >&2
  exit 1
fi

mapfile -t go_files < <(sources '*.go')
echo "lint: gofmt (${#go_files[@]} files)"
if ((${#go_files[@]} > 0)); then
  unformatted=$(gofmt -l "${go_files[@]}")
  status=$?
  if [ -n "$unformatted" ]; then
    echo "lint: not gofmt-formatted (gofmt -w FILE fixes them):" >&2
    printf '%s\n' "$unformatted" | sed 's/^/  /' >&2
  fi
  if [ "$status" != 0 ] || [ -n "$unformatted" ]; then failed+=(gofmt); fi
fi

echo "lint: go vet"
"$GO" vet ./... || failed+=("go vet")

echo "lint: staticcheck"
if need "$STATICCHECK" "make tools installs the pinned version"; then
  "$STATICCHECK" ./... || failed+=(staticcheck)
else
  failed+=(staticcheck)
fi

mapfile -t c_files < <(sources '*.c' '*.cc' '*.h' '*.hpp')
echo "lint: clang-format (${#c_files[@]} files)"
if ! need "$CLANG_FORMAT" "on Debian: apt-get install clang-format"; then
  failed+=(clang-format)
elif [ ! -f .clang-format ]; then
  echo "lint: no .clang-format in $(pwd)" >&2
  failed+=(clang-format)
elif ((${#c_files[@]} > 0)); then
  if ! "$CLANG_FORMAT" --style=file:.clang-format --dry-run -Werror "${c_files[@]}"; then
    echo "lint: not clang-formatted ($CLANG_FORMAT -i FILE fixes them)" >&2
    failed+=(clang-format)
  fi
fi

if ((${#failed[@]} > 0)); then
  echo "lint: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "lint: ok"
