# syntax=docker/dockerfile:1
#
# mooncdc's container image: a static binary on a distroless base (no shell,
# no package manager), run as a non-root user. Written for Docker Engine 24+
# with BuildKit (the default builder since Engine 23) and the Dockerfile 1.x
# syntax; docker-compose.yml builds it (`make up`).
#
#   docker build -t mooncdc --build-arg VERSION=$(git describe --tags --always) .
#   docker run --rm mooncdc version
#
# internal/composetest checks: multi-stage, CGO_ENABLED=0, a final non-root
# USER and an ENTRYPOINT that is the mooncdc binary.

ARG GO_VERSION=1.26

# ---- build ----
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
# Static (no libc), stripped; the version goes where `make build` puts it.
# -buildvcs=false: the build context need not be a git checkout.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false \
        -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/mooncdc ./cmd/mooncdc

# ---- runtime ----
# distroless/static: CA certificates, tzdata and /etc/passwd with the
# nonroot user (65532), nothing else.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mooncdc /usr/local/bin/mooncdc
# data_dir (the embedded development Kafka's data; unused with kafka.brokers
# set) must be writable by the non-root user.
WORKDIR /home/nonroot
ENV MOONCDC_DATA_DIR=/home/nonroot/mooncdc-data
# /metrics, /healthz, /readyz (metrics.listen; set MOONCDC_METRICS_LISTEN=0.0.0.0:9187
# to reach it from outside the container).
EXPOSE 9187
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/mooncdc"]
CMD ["run"]
