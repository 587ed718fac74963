#!/usr/bin/env bash
# Installs a real Prometheus server and promtool for the tests (no Docker): Debian's package
# prometheus $PROMETHEUS_DEB_VERSION, downloaded from the Debian archive (sha256-pinned; without the pinned
# file, whatever `apt-get download prometheus` gives) and unpacked with dpkg -x into
# $HVPA_PROMETHEUS_DIR (default: <repo>/.cache/prometheus; git-ignored). Nothing is installed system-wide and
# no service starts: test/prometheus runs the binary on loopback. Prints the bin folder on stdout.
set -euo pipefail

PROMETHEUS_DEB_VERSION=${PROMETHEUS_DEB_VERSION:-2.42.0+ds-5+deb12u1}
PROMETHEUS_DEB_SHA256=${PROMETHEUS_DEB_SHA256:-81d59a24fce84f7fbe97a45a4f2914b6a5881b5cd1db2a6a0e129e515e1a5f55}
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${HVPA_PROMETHEUS_DIR:-$repo/.cache/prometheus}
bin=$dir/usr/bin

log() { echo "prometheus: $*" >&2; }

if [ -x "$bin/prometheus" ] && [ -x "$bin/promtool" ] && "$bin/prometheus" --version >/dev/null 2>&1; then
  log "$("$bin/prometheus" --version 2>&1 | head -1) is in $bin"
  echo "$bin"
  exit 0
fi

arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
deb=$tmp/prometheus.deb
url="https://deb.debian.org/debian/pool/main/p/prometheus/prometheus_${PROMETHEUS_DEB_VERSION}_${arch}.deb"
log "downloading $url"
if curl -fsSL --retry 3 -o "$deb" "$url" && { [ "$arch" != amd64 ] || echo "$PROMETHEUS_DEB_SHA256  $deb" | sha256sum -c --quiet; }; then
  :
else
  log "the pinned package is not there (or its checksum differs): apt-get download prometheus"
  (cd "$tmp" && { apt-get download prometheus 2>/dev/null || { apt-get update -qq && apt-get download prometheus; }; })
  deb=$(ls "$tmp"/prometheus_*.deb)
fi
rm -rf "$dir"
mkdir -p "$dir"
dpkg -x "$deb" "$dir"
log "$("$bin/prometheus" --version 2>&1 | head -1) unpacked into $dir"
echo "$bin"
