#!/usr/bin/env bash
# Builds the command-line tools the Makefile and the tests use that are not Go tools of this module:
#   helm $HELM_VERSION  from the helm.sh/helm/v3 Go module (the Go module proxy; no prebuilt downloads)
# into $HVPA_TOOLS_DIR/bin (default: <repo>/.cache/tools/bin; git-ignored).
# A tool already there at the pinned version is not rebuilt. Prints the bin folder on stdout.
#
#   hack/tools.sh          build every tool
#   hack/tools.sh helm     build helm only
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v3.22.0}
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${HVPA_TOOLS_DIR:-$repo/.cache/tools}
bin=$dir/bin
mkdir -p "$bin"

log() { echo "tools: $*" >&2; }

build_helm() {
  if [ -x "$bin/helm" ] && [ "$("$bin/helm" version --template '{{.Version}}' 2>/dev/null)" = "$HELM_VERSION" ]; then
    log "helm $HELM_VERSION is in $bin"
    return
  fi
  start=$(date +%s)
  log "building helm $HELM_VERSION from the helm.sh/helm/v3 Go module (cold: a few minutes)"
  # The same version stamps as helm's own release build: the version (otherwise "v3.22" only) and the
  # Kubernetes version that `helm template` and `helm lint` assume (the minor of helm's client-go).
  # Both go commands run in a temporary folder outside this module, so that they never touch go.mod or go.sum.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  gomod=$(cd "$tmp" && go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$gomod" ] || { log "could not download helm.sh/helm/v3@$HELM_VERSION"; exit 1; }
  clientgo=$(awk '$1 == "k8s.io/client-go" {print $2; exit}' "$gomod")
  k8s_minor=$(echo "$clientgo" | cut -d. -f2)
  ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
  done
  # GOBIN is the temporary folder: a failed build never leaves a half-written binary at the final path.
  (cd "$tmp" && CGO_ENABLED=0 GOBIN=$tmp go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION")
  mv "$tmp/helm" "$bin/helm"
  log "helm $("$bin/helm" version --template '{{.Version}}') built in $(( $(date +%s) - start ))s"
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(helm)
for t in "${tools[@]}"; do
  case $t in
    helm) build_helm ;;
    *) log "unknown tool $t (known: helm)"; exit 2 ;;
  esac
done

echo "$bin"
