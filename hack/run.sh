#!/usr/bin/env bash
# Runs one command of hack/ (a module of its own: hack/go.mod) in the caller's folder, so that relative paths
# in its arguments and defaults mean what they mean from the repository root:
#
#   hack/run.sh TOOL [ARGS...]     e.g. hack/run.sh gentrace --demand flash --seed 1 | gzip > flash.csv.gz
#
# It builds hack/TOOL in the hack module into $HVPA_HACK_BIN (default: <repo>/bin/hack; git-ignored), then
# runs it in place of this script (signals, the exit status and standard streams are the tool's).
# `go run ./hack/TOOL` from the repository root does not work: the product module does not hold hack/.
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || { echo "usage: hack/run.sh TOOL [ARGS...]; TOOL is a folder of hack/ with a main package" >&2; exit 2; }
tool=$1
shift
[ -d "$hack/$tool" ] || { echo "hack/run.sh: no folder hack/$tool" >&2; exit 2; }
bin=${HVPA_HACK_BIN:-$hack/../bin/hack}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)
go -C "$hack" build -o "$bin/$tool" "./$tool"
exec "$bin/$tool" "$@"
