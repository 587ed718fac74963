#!/usr/bin/env bash
# hack/upstream-vpa.sh (make upstream-vpa): builds upstream's VPA recommender, admission controller and updater
# at UPSTREAM_VPA_VERSION from its Go module (k8s.io/autoscaler/vertical-pod-autoscaler) into
# .cache/upstream/<version>/, for the tests that run hvpa beside them. The module's go.mod has exclude directives, so `go install module@version` refuses it: it is
# built as the main module from a copy of the module cache's tree. Cached: a second run does nothing.
set -euo pipefail
version=${UPSTREAM_VPA_VERSION:-v1.8.1}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/.cache/upstream/$version"
if [ -x "$out/vpa-recommender" ] && [ -x "$out/vpa-admission-controller" ] && [ -x "$out/vpa-updater" ]; then
	exit 0
fi
dir=$(go mod download -json "k8s.io/autoscaler/vertical-pod-autoscaler@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ]; then
	echo "upstream-vpa: could not download k8s.io/autoscaler/vertical-pod-autoscaler@$version" >&2
	exit 1
fi
src=$(mktemp -d)
trap 'chmod -R u+w "$src"; rm -rf "$src"' EXIT
cp -r "$dir/." "$src"
chmod -R u+w "$src"
mkdir -p "$out"
for c in recommender admission-controller updater; do
	echo "upstream-vpa: go build k8s.io/autoscaler/vertical-pod-autoscaler/pkg/$c@$version"
	(cd "$src" && GOFLAGS=-mod=mod go build -o "$out/vpa-$c" "./pkg/$c")
done
