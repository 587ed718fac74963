#!/usr/bin/env bash
# Builds the command-line tools the Makefile and the tests use that are not Go tools of this module:
#   helm $HELM_VERSION                    from the helm.sh/helm/v3 Go module (the Go module proxy; no prebuilt downloads)
#   golangci-lint $GOLANGCI_LINT_VERSION  from the github.com/golangci/golangci-lint/v2 Go module
#   cyclonedx-gomod $CYCLONEDX_GOMOD_VERSION  from the github.com/CycloneDX/cyclonedx-gomod Go module (the image's SBOM)
#   gotestsum $GOTESTSUM_VERSION          from the gotest.tools/gotestsum Go module (make test's log: every test's
#                                         output and a summary of skipped and failed tests)
# into $HVPA_TOOLS_DIR/bin (default: <repo>/.cache/tools/bin; git-ignored).
# A tool already there at the pinned version is not rebuilt. Prints the bin folder on stdout.
#
#   hack/tools.sh          build every tool
#   hack/tools.sh helm     build helm only
#   hack/tools.sh golangci-lint
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v3.22.0}
GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}
CYCLONEDX_GOMOD_VERSION=${CYCLONEDX_GOMOD_VERSION:-v1.10.0}
GOTESTSUM_VERSION=${GOTESTSUM_VERSION:-v1.13.0}
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${HVPA_TOOLS_DIR:-$repo/.cache/tools}
bin=$dir/bin
mkdir -p "$bin"

log() { echo "tools: $*" >&2; }

# go_install NAME PACKAGE@VERSION [LDFLAGS]: builds one command from its Go module into $bin. The go command
# runs in a temporary folder outside this module (go.mod and go.sum are never touched) with GOBIN there, so
# that a failed build never leaves a half-written binary at the final path.
go_install() {
  local name=$1 pkg=$2 ldflags=${3:-"-s -w"} start tmp
  start=$(date +%s)
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && CGO_ENABLED=0 GOBIN=$tmp go install -trimpath -ldflags "$ldflags" "$pkg"); then
    rm -rf "$tmp"
    return 1
  fi
  mv "$tmp/$name" "$bin/$name"
  rm -rf "$tmp"
  log "$name built in $(( $(date +%s) - start ))s"
}

build_helm() {
  if [ -x "$bin/helm" ] && [ "$("$bin/helm" version --template '{{.Version}}' 2>/dev/null)" = "$HELM_VERSION" ]; then
    log "helm $HELM_VERSION is in $bin"
    return
  fi
  log "building helm $HELM_VERSION from the helm.sh/helm/v3 Go module (cold: a few minutes)"
  # The same version stamps as helm's own release build: the version (otherwise "v3.22" only) and the
  # Kubernetes version that `helm template` and `helm lint` assume (the minor of helm's client-go, read from
  # helm's go.mod, downloaded in a temporary folder outside this module).
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
  go_install helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "$ldflags"
}

build_golangci_lint() {
  want=${GOLANGCI_LINT_VERSION#v}
  if [ -x "$bin/golangci-lint" ] && "$bin/golangci-lint" version 2>/dev/null | grep -q "version $want "; then
    log "golangci-lint $GOLANGCI_LINT_VERSION is in $bin"
    return
  fi
  log "building golangci-lint $GOLANGCI_LINT_VERSION from its Go module (cold: a few minutes)"
  # the version stamp its own release build sets (main.version), so that the cache check above holds
  go_install golangci-lint "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION" "-s -w -X main.version=$want"
}

build_cyclonedx_gomod() {
  if [ -x "$bin/cyclonedx-gomod" ] && "$bin/cyclonedx-gomod" version 2>/dev/null | grep -q "${CYCLONEDX_GOMOD_VERSION#v}"; then
    log "cyclonedx-gomod $CYCLONEDX_GOMOD_VERSION is in $bin"
    return
  fi
  log "building cyclonedx-gomod $CYCLONEDX_GOMOD_VERSION from its Go module"
  go_install cyclonedx-gomod "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$CYCLONEDX_GOMOD_VERSION"
}

build_gotestsum() {
  # the module version the binary was built from (its build info), as `go version -m` reads it
  if [ -x "$bin/gotestsum" ] && go version -m "$bin/gotestsum" 2>/dev/null | awk '$1 == "mod" {print $3}' | grep -qx "$GOTESTSUM_VERSION"; then
    log "gotestsum $GOTESTSUM_VERSION is in $bin"
    return
  fi
  log "building gotestsum $GOTESTSUM_VERSION from its Go module"
  go_install gotestsum "gotest.tools/gotestsum@$GOTESTSUM_VERSION"
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(helm golangci-lint)
for t in "${tools[@]}"; do
  case $t in
    helm) build_helm ;;
    golangci-lint) build_golangci_lint ;;
    cyclonedx-gomod) build_cyclonedx_gomod ;;
    gotestsum) build_gotestsum ;;
    *) log "unknown tool $t (known: helm, golangci-lint, cyclonedx-gomod, gotestsum)"; exit 2 ;;
  esac
done

echo "$bin"
