#!/usr/bin/env bash
# hack/keda.sh (make keda): builds KEDA's operator at KEDA_VERSION from its Go module (github.com/kedacore/keda/v2)
# into .cache/keda/<version>/keda-operator, with the module's CRDs (config/crd/bases) beside it, for the test that
# drives an Hvpa with a ScaledObject. No KEDA code is committed here. The module's go.mod has replace and exclude
# directives, so `go install module@version` refuses it: it is built as the main module from a copy of the module
# cache's tree, as hack/upstream-vpa.sh does. Cached: a second run does nothing.
set -euo pipefail
version=${KEDA_VERSION:-v2.21.0}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/.cache/keda/$version"
if [ -x "$out/keda-operator" ] && [ -d "$out/crd" ]; then
	exit 0
fi
dir=$(go mod download -json "github.com/kedacore/keda/v2@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ]; then
	echo "keda: could not download github.com/kedacore/keda/v2@$version" >&2
	exit 1
fi
src=$(mktemp -d)
trap 'chmod -R u+w "$src"; rm -rf "$src"' EXIT
cp -r "$dir/." "$src"
chmod -R u+w "$src"
mkdir -p "$out/crd"
echo "keda: go build github.com/kedacore/keda/v2/cmd/operator@$version (a large module: several minutes and a few GB the first time)"
(cd "$src" && GOFLAGS=-mod=mod go build -o "$out/keda-operator.tmp" ./cmd/operator)
cp "$dir"/config/crd/bases/*.yaml "$out/crd/"
chmod u+w "$out"/crd/*.yaml
mv "$out/keda-operator.tmp" "$out/keda-operator"
