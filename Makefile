# hvpa: one Makefile target per job. `make help` lists them.
SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := help

K8S_VERSION ?= v1.36.3
ETCD_VERSION ?= v3.6.8
CONTROLPLANE_DIR ?= $(CURDIR)/.cache/controlplane/$(K8S_VERSION)
CONTROLPLANE_BIN := $(CONTROLPLANE_DIR)/bin
export KUBEBUILDER_ASSETS ?= $(CONTROLPLANE_BIN)
export HVPA_CONTROLPLANE_DIR := $(CONTROLPLANE_DIR)
export K8S_VERSION ETCD_VERSION

CONTROLLER_GEN := go tool controller-gen
# hack/ is a module of its own (hack/go.mod): `$(HACK_RUN) TOOL ARGS` builds hack/TOOL there and runs it from
# the repository root, where the relative paths of its arguments and defaults point
HACK_RUN := bash hack/run.sh
# the files the generators write (make generate); make verify fails when one differs from the commit
GENERATED := apis charts docs/metrics.md docs/reference.md docs/run.md docs/migrating-from-vpa.md docs/cli.md README.md
# the tests of cmd/hvpa that rewrite their page with -update (docs/reference.md, docs/run.md, the flags
# section of docs/migrating-from-vpa.md, the example outputs of docs/cli.md, the README's Makefile section)
DOC_GENERATORS := TestReference|TestRunReference|TestMigrationReference|TestDocumentedExamples|TestReadmeMakefileHelp
GO_TEST_FLAGS ?=
FUZZTIME ?= 5s
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/hvpa-dev/hvpa/internal/version.Version=$(VERSION)
CONTROLPLANE_STAMP := $(CONTROLPLANE_BIN)/kube-apiserver $(CONTROLPLANE_BIN)/kube-controller-manager $(CONTROLPLANE_BIN)/kubectl $(CONTROLPLANE_BIN)/etcd
HELM_VERSION ?= v3.22.0
export HELM_VERSION
GOLANGCI_LINT_VERSION ?= v2.15.0
export GOLANGCI_LINT_VERSION
UPSTREAM_VPA_VERSION ?= v1.8.1
export UPSTREAM_VPA_VERSION
# the Go modules whose CRDs the chart test installs (ServiceMonitor, PrometheusRule; Certificate, Issuer)
PROMETHEUS_OPERATOR_VERSION ?= v0.85.0
CERT_MANAGER_VERSION ?= v1.21.2
export PROMETHEUS_OPERATOR_VERSION CERT_MANAGER_VERSION

##@ General
.PHONY: help
help: ## Show every target with its description.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
.PHONY: generate
generate: deepcopy manifests ## Every generator: deepcopy, manifests, docs/metrics.md from the registered metrics, and docs/reference.md, docs/run.md, docs/migrating-from-vpa.md's flags, docs/cli.md's outputs and the README's Makefile section from the code (cmd/hvpa's tests with -update).
	$(HACK_RUN) metricsdoc > docs/metrics.md.tmp && mv docs/metrics.md.tmp docs/metrics.md
	go test -count=1 ./cmd/hvpa -run '^($(DOC_GENERATORS))$$' -update

.PHONY: deepcopy
deepcopy: ## Generate the deepcopy code of the API types (controller-gen).
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...

.PHONY: manifests
manifests: deepcopy ## Generate CRDs (charts/hvpa/crds), each component's ClusterRole rules from its +kubebuilder:rbac markers and the webhook configurations from webhooks.Configurations (charts/hvpa/files).
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true paths=./apis/... output:crd:artifacts:config=charts/hvpa/crds
	$(HACK_RUN) crdpatch charts/hvpa/crds
	$(CONTROLLER_GEN) rbac:roleName=hvpa-recommender,fileName=recommender.yaml "paths=./controllers/recommender;./usage;./internal/workload" output:rbac:dir=charts/hvpa/files/rbac
	$(CONTROLLER_GEN) rbac:roleName=hvpa-controller,fileName=hvpa.yaml "paths=./controllers/hvpa;./internal/workload" output:rbac:dir=charts/hvpa/files/rbac
	$(CONTROLLER_GEN) rbac:roleName=hvpa-updater,fileName=updater.yaml "paths=./controllers/updater;./internal/workload" output:rbac:dir=charts/hvpa/files/rbac
	$(CONTROLLER_GEN) rbac:roleName=hvpa-admission-controller,fileName=admission.yaml "paths=./webhooks;./internal/workload" output:rbac:dir=charts/hvpa/files/rbac
	$(HACK_RUN) webhookgen charts/hvpa/files/webhooks.yaml

.PHONY: fmt
fmt: ## Format the Go code (both modules: the product and hack/).
	go fmt ./...
	go -C hack fmt ./...

.PHONY: vet
vet: ## Run go vet (both modules: the product and hack/).
	go vet ./...
	go -C hack vet ./...

.PHONY: lint
lint: ## Static checks: golangci-lint (GOLANGCI_LINT_VERSION, built from its Go module) with the import rules of the layers, import aliases, errcheck, errorlint, forbidigo (no clock in the pure cores), funlen, gocyclo, ginkgolinter, nolintlint, staticcheck, vet and gofmt (.golangci.yml).
	@bin=$$(bash hack/tools.sh golangci-lint) && $$bin/golangci-lint run ./... && (cd hack && $$bin/golangci-lint run ./...)

.PHONY: verify
verify: generate lint ## Run every generator and fail on any difference (generated files, go.mod and go.sum of both modules) or lint finding.
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated files are out of date; run 'make generate' and commit:"; git status --porcelain -- $(GENERATED); git diff --stat -- $(GENERATED); exit 1; fi
	@for m in . hack; do go -C $$m mod tidy -diff || { echo "$$m/go.mod or go.sum is not tidy; run 'go -C $$m mod tidy' and commit"; exit 1; }; done
	@echo "verify: generated files are up to date; go.mod and go.sum of both modules are tidy"

##@ Local control plane
.PHONY: controlplane
controlplane: $(CONTROLPLANE_STAMP) ## Build kube-apiserver, kube-controller-manager, kubectl and etcd from Go modules (cached).

$(CONTROLPLANE_STAMP):
	bash hack/controlplane.sh

##@ Tools
.PHONY: helm
helm: ## Build helm (HELM_VERSION) from its Go module into .cache/tools/bin (cached; the chart test runs it).
	@bash hack/tools.sh helm >/dev/null

.PHONY: prometheus
prometheus: ## Unpack Debian's Prometheus server and promtool (PROMETHEUS_DEB_VERSION, sha256-pinned) into .cache/prometheus (cached; tests run it on loopback).
	@bash hack/prometheus.sh >/dev/null

.PHONY: upstream-vpa
upstream-vpa: ## Build upstream's VPA recommender, admission controller and updater (UPSTREAM_VPA_VERSION) from its Go module into .cache/upstream (cached; tests run hvpa beside them).
	@bash hack/upstream-vpa.sh

.PHONY: keda
keda: ## Build KEDA's operator (KEDA_VERSION) from its Go module into .cache/keda with its CRDs (cached; not part of make test: a large build; the KEDA spec of test/integration/hvpa skips without it).
	@bash hack/keda.sh

##@ Test
.PHONY: test
test: controlplane helm upstream-vpa prometheus image-under-test ## Unit tests, integration suites and the e2e suite of both modules (the product and hack/) against a real kube-apiserver and a real Prometheus (builds the control plane, helm, upstream's VPA and Prometheus when missing); every test's output, then the skipped and failed tests with their reasons.
	@bin=$$(bash hack/tools.sh gotestsum) && HVPA_IMAGE_TEST_DIR=$(IMAGE_TEST_DIR) HVPA_IMAGE_PLATFORMS="$(HOST_PLATFORM)" \
		$$bin/gotestsum --format standard-verbose --format-hide-empty-pkg --raw-command -- bash hack/gotest.sh $(GO_TEST_FLAGS) -count=1

.PHONY: test-unit
test-unit: ## Unit tests only, with the race detector (fuzz seed corpora included; envtest suites skip under -short).
	go test $(GO_TEST_FLAGS) -race -short $$(go list ./... | grep -v /e2e)
	go -C hack test $(GO_TEST_FLAGS) -race -short ./...

# The packages of the Ginkgo suites a label marks (framework.RunSuite(t, name, framework.<Label>, ...)): the
# suites are selected by their label, as Kueue's Makefile-test.mk does, never by what they import.
suites_labelled = $(shell grep -rlE --include='*_test.go' 'framework[.]RunSuite.*framework[.]$(1)\b' . | xargs -n1 dirname | sort -u)
LABEL_FILTER ?= integration

.PHONY: test-integration
test-integration: controlplane helm upstream-vpa ## The Ginkgo suites labelled integration on the local control plane (their packages' plain tests too); LABEL_FILTER narrows the specs (Ginkgo's --label-filter, e.g. LABEL_FILTER='integration && !slow').
	go test $(GO_TEST_FLAGS) -count=1 $(call suites_labelled,Integration) -args -ginkgo.label-filter='$(LABEL_FILTER)'

# The image hack/image's TestImage inspects: built here, before go test runs (a static build of the whole
# dependency tree per platform takes minutes on a cold build cache, too long inside a test's time limit).
IMAGE_TEST_DIR := $(CURDIR)/.cache/image-test
HOST_PLATFORM := linux/$(shell go env GOARCH)
IMAGE_TEST_ARGS := VERSION=v0.0.0-imagetest CREATED=1700000000 REVISION= IMG=

.PHONY: image-under-test
image-under-test:
	@$(MAKE) -s image IMAGE_DIR=$(IMAGE_TEST_DIR) IMAGE_PLATFORMS="$(HOST_PLATFORM)" $(IMAGE_TEST_ARGS)

.PHONY: test-image
test-image: ## The image test for every platform of IMAGE_PLATFORMS (make test checks the host's only): cross-builds, minutes on a cold build cache.
	@$(MAKE) -s image IMAGE_DIR=$(IMAGE_TEST_DIR)-all IMAGE_PLATFORMS="$(IMAGE_PLATFORMS)" $(IMAGE_TEST_ARGS)
	HVPA_IMAGE_TEST_DIR=$(IMAGE_TEST_DIR)-all HVPA_IMAGE_PLATFORMS="$(IMAGE_PLATFORMS)" go -C hack test -count=1 -run TestImage -v ./image/

.PHONY: test-e2e
test-e2e: controlplane helm prometheus build ## The e2e suite: bin/hvpa as a process against the local control plane, scraped by a real Prometheus (make test runs it too).
	HVPA_BINARY=$(CURDIR)/bin/hvpa go test -count=1 -v ./e2e/...

.PHONY: dashboards
dashboards: controlplane helm prometheus build ## Run the e2e suite keeping its Prometheus data (.cache/e2e-prometheus), then render the dashboard images from it into docs/dashboards (hack/dashrender, on a real Prometheus).
	HVPA_BINARY=$(CURDIR)/bin/hvpa HVPA_E2E_PROMETHEUS_DATA=$(CURDIR)/.cache/e2e-prometheus go test -count=1 ./e2e/...
	$(HACK_RUN) dashrender --prometheus .cache/e2e-prometheus --dashboards charts/hvpa/dashboards --out docs/dashboards

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 5s) beyond its seed corpus.
	@bash hack/fuzz.sh $(FUZZTIME)

.PHONY: bench
bench: ## Run every benchmark with -benchmem.
	go test -run '^$$' -bench . -benchmem $$(go list ./... | grep -v /e2e)

##@ Build and run
.PHONY: build
build: ## Build the hvpa binary into bin/hvpa.
	go build -ldflags "$(LDFLAGS)" -o bin/hvpa ./cmd/hvpa

IMAGE_DIR ?= $(CURDIR)/.cache/image
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
IMG ?=
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
# the commit's time: every timestamp in the image, so that the same source gives the same digests
CREATED ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: image
image: ## OCI image without a container engine: static binaries per IMAGE_PLATFORMS, the multi-arch image layout in IMAGE_DIR/oci and its SBOM IMAGE_DIR/sbom.cdx.json (IMG=ref also pushes).
	@mkdir -p $(IMAGE_DIR)
	@bins=""; for p in $(IMAGE_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
		echo "image: building hvpa $(VERSION) for $$p"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(IMAGE_DIR)/hvpa-$$os-$$arch ./cmd/hvpa || exit 1; \
		bins="$$bins --binary $$p=$(IMAGE_DIR)/hvpa-$$os-$$arch"; done; \
	$(HACK_RUN) image --out $(IMAGE_DIR)/oci --version $(VERSION) --revision "$(REVISION)" --created $(CREATED) $$bins $(if $(IMG),--push $(IMG))
	@bin=$$(bash hack/tools.sh cyclonedx-gomod) && CGO_ENABLED=0 $$bin/cyclonedx-gomod app -json -licenses -noserial -notimestamp \
		-main cmd/hvpa -output $(IMAGE_DIR)/sbom.cdx.json . && echo "image: SBOM in $(IMAGE_DIR)/sbom.cdx.json"

CHART_VERSION = $(shell awk '$$1 == "version:" {print $$2}' charts/hvpa/Chart.yaml)
APP_VERSION = $(shell awk '$$1 == "appVersion:" {gsub(/"/, "", $$2); print $$2}' charts/hvpa/Chart.yaml)
CHART_REPO ?= oci://ghcr.io/hvpa-dev/charts

.PHONY: release-check
release-check: ## Refuse a release VERSION the chart (version, appVersion) and CHANGELOG.md do not name (docs/release.md).
	@case "$(VERSION)" in v[0-9]*.[0-9]*.[0-9]*) ;; *) echo "release: VERSION=$(VERSION) is not vX.Y.Z"; exit 1 ;; esac
	@[ "$(APP_VERSION)" = "$(VERSION)" ] || { echo "release: charts/hvpa/Chart.yaml appVersion is $(APP_VERSION), not $(VERSION): set appVersion (the image tag the chart runs) and version"; exit 1; }
	@[ "v$(CHART_VERSION)" = "$(VERSION)" ] || { echo "release: charts/hvpa/Chart.yaml version is $(CHART_VERSION), not $(VERSION:v%=%)"; exit 1; }
	@grep -q '^## \[$(VERSION:v%=%)\]' CHANGELOG.md || { echo "release: CHANGELOG.md has no section '## [$(VERSION:v%=%)]': move Unreleased there"; exit 1; }
	@echo "release: $(VERSION) is consistent (chart, appVersion, CHANGELOG)"

.PHONY: release
release: release-check ## Publish VERSION (a tag): image to IMG with its SBOM, chart to CHART_REPO (docs/release.md).
	@[ -n "$(IMG)" ] || { echo "release: set IMG, e.g. IMG=ghcr.io/hvpa-dev/hvpa:$(VERSION)"; exit 1; }
	$(MAKE) image VERSION=$(VERSION) IMG=$(IMG)
	@bin=$$(bash hack/tools.sh helm) && $$bin/helm package charts/hvpa -d $(IMAGE_DIR) && $$bin/helm push $(IMAGE_DIR)/hvpa-$(VERSION:v%=%).tgz $(CHART_REPO)

.PHONY: demo
demo: controlplane ## A Deployment scaled by an Hvpa and an HPA under a played load, with a live table (Ctrl-C stops).
	$(HACK_RUN) demo $(DEMO_ARGS)

SHOOTOUT_DIR ?= $(CURDIR)/bin/shootout
.PHONY: shootout
shootout: ## The closed-loop shoot-out (issue 33): every demand profile and ../shared/traces under hvpa, hpa (250m/500m/1000m), vpa and hpa+vpa; markdown tables into SHOOTOUT_DIR/shootout.md (SEED, HVPA_FILE, POLICIES, SIMULATE_ARGS; PROFILES: the generated profiles, default the eight of issue 33, the extra ones in docs/simulate.md).
	bash hack/shootout.sh $(SHOOTOUT_DIR)

N ?= 100 1000
INTERVAL ?= 30s
LOOPS ?= 5
SETTLE ?= 0
CREATES ?= 1000
COMPONENTS ?= recommender
HISTORY ?= 192h
BENCH_ARGS ?=

.PHONY: bench-scale
bench-scale: controlplane build ## Scale benchmark of bin/hvpa on a local control plane per N (N="100 1000", INTERVAL, LOOPS, SETTLE, CREATES, HISTORY, COMPONENTS, BENCH_ARGS); not part of make test.
	$(HACK_RUN) benchscale --hvpa bin/hvpa --n "$(N)" --interval $(INTERVAL) --loops $(LOOPS) --settle $(SETTLE) --creates $(CREATES) --history $(HISTORY) --components $(COMPONENTS) $(BENCH_ARGS)

.PHONY: clean
clean: ## Remove build outputs (keeps the control-plane cache; `rm -rf .cache` removes that too).
	rm -rf bin
