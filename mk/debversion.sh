#!/usr/bin/env bash
# mk/debversion.sh VERSION: prints the Debian package version of a
# `git describe --tags --always --dirty` version, ordered as dpkg orders
# versions (a pre-release before its release, commits after a tag after it):
#
#   v0.1.0                      0.1.0
#   v0.1.0-dirty                0.1.0+dirty
#   v0.1.0-3-g1a2b3c4           0.1.0+git3.g1a2b3c4
#   v0.1.0-3-g1a2b3c4-dirty     0.1.0+git3.g1a2b3c4.dirty
#   v0.2.0-rc.1                 0.2.0~rc.1
#   1a2b3c4 (no tag yet)        0.0.0~git.1a2b3c4
#   dev, or anything else       0.0.0~dev (characters dpkg refuses become .)
set -euo pipefail

v=${1:?usage: debversion.sh VERSION}
v=${v#v}
dirty=""
if [[ $v == *-dirty ]]; then
  dirty=dirty
  v=${v%-dirty}
fi

semver='([0-9]+\.[0-9]+\.[0-9]+)(-([0-9A-Za-z.-]+))?'
base="" pre="" since=""
if [[ $v =~ ^${semver}-([0-9]+)-g([0-9a-f]+)$ ]]; then
  base=${BASH_REMATCH[1]} pre=${BASH_REMATCH[3]}
  since="git${BASH_REMATCH[4]}.g${BASH_REMATCH[5]}"
elif [[ $v =~ ^${semver}$ ]]; then
  base=${BASH_REMATCH[1]} pre=${BASH_REMATCH[3]}
elif [[ $v =~ ^[0-9a-f]{4,40}$ ]]; then
  base=0.0.0 pre="git.$v"
else
  base=0.0.0 pre=$(printf '%s' "$v" | tr -c 'A-Za-z0-9.+~' '.')
fi

plus=$since
if [ -n "$dirty" ]; then plus=${plus:+$plus.}$dirty; fi
out=$base
if [ -n "$pre" ]; then out="$out~${pre//-/.}"; fi
if [ -n "$plus" ]; then out="$out+$plus"; fi
printf '%s\n' "$out"
