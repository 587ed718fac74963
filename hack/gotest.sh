#!/usr/bin/env bash
# `go test -json` over both modules of the repository, one after the other: the product (./...) and the tools
# (hack/, a module of its own that ./... does not reach). make test runs it under gotestsum --raw-command, which
# reads the one JSON stream and prints every test's output, then one summary of the skipped and failed tests
# of both. Arguments go to both `go test` runs (e.g. -count=1 -run X). Fails when either run fails.
#
#   hack/gotest.sh [GO TEST FLAGS...]
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
go test -json "$@" ./... || rc=1
go -C hack test -json "$@" ./... || rc=1
exit $rc
