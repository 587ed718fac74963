#!/usr/bin/env bash
# Builds a real local Kubernetes control plane from Go modules (no Docker, no downloads of prebuilt binaries):
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl  from k8s.io/kubernetes@$K8S_VERSION
#   etcd                                                               from go.etcd.io/etcd/server/v3@$ETCD_VERSION
# into $HVPA_CONTROLPLANE_DIR/bin (default: <repo>/.cache/controlplane/<k8s version>/bin; git-ignored).
# Work that is already done is skipped. Prints the bin folder on stdout (usable as KUBEBUILDER_ASSETS).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.8}
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${HVPA_CONTROLPLANE_DIR:-$repo/.cache/controlplane/$K8S_VERSION}
bin=$dir/bin
mkdir -p "$bin" "$dir/src"

log() { echo "controlplane: $*" >&2; }

k8s_bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
need_k8s=0
for b in "${k8s_bins[@]}"; do [ -x "$bin/$b" ] || need_k8s=1; done

if [ "$need_k8s" = 1 ]; then
  start=$(date +%s)
  src=$dir/src/kubernetes
  mkdir -p "$src"
  log "building ${k8s_bins[*]} $K8S_VERSION from the k8s.io/kubernetes Go module (cold: several minutes)"
  # The kubernetes module lists its ~31 staging modules (k8s.io/api, k8s.io/apiserver, ...) at v0.0.0 and
  # replaces them with local folders; a module that depends on it must map each to the published v0.x.y.
  gomod=$(cd "$src" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$gomod" ] || { log "could not download k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
  staging=v0.${K8S_VERSION#v1.}
  {
    echo "module hvpa.local/controlplane"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod" | sort -u | while read -r m; do
      echo "replace $m => $m $staging"
    done
  } > "$src/go.mod"
  log "$(grep -c '^replace' "$src/go.mod") staging modules mapped to $staging"
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#v1.}"
  ldflags="$ldflags -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version/verflag.programName=kubernetes"
  (
    cd "$src"
    for b in "${k8s_bins[@]}"; do
      pkg=k8s.io/kubernetes/cmd/$b
      log "go build $pkg"
      CGO_ENABLED=0 GOFLAGS=-mod=mod go build -ldflags "$ldflags" -o "$bin/$b.tmp" "$pkg"
      mv "$bin/$b.tmp" "$bin/$b"
    done
  )
  log "kubernetes binaries built in $(( $(date +%s) - start ))s"
fi

if [ ! -x "$bin/etcd" ]; then
  start=$(date +%s)
  src=$dir/src/etcd
  mkdir -p "$src"
  log "building etcd $ETCD_VERSION from the go.etcd.io/etcd/server/v3 Go module"
  printf 'module hvpa.local/etcd\n\ngo 1.26\n' > "$src/go.mod"
  (
    cd "$src"
    GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3
    mv "$bin/etcd.tmp" "$bin/etcd"
  ) || {
    log "building etcd from the module failed; falling back to Debian's etcd-server"
    command -v etcd >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null; }
    ln -sf "$(command -v etcd)" "$bin/etcd"
  }
  log "etcd ready in $(( $(date +%s) - start ))s"
fi

echo "$bin"
