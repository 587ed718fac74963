# The hvpa image the Helm chart runs (ghcr.io/hvpa-dev/hvpa): a static binary on distroless, non-root (UID
# 65532, as the chart's securityContext expects), the binary as the entrypoint (the chart passes `run ...`).
# Build: make image IMG=ghcr.io/you/hvpa:tag (needs a container engine; none exists on the development machine).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/hvpa-dev/hvpa/internal/version.Version=${VERSION}" -o /out/hvpa ./cmd/hvpa

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/hvpa /hvpa
USER 65532:65532
ENTRYPOINT ["/hvpa"]
