# syntax=docker/dockerfile:1
# switchback-companion alone: no emulator, simulated device or demo (Documentation/Deployment.md).
# Build from the repository root, which is the context: the Tools package depends on the root package.
#   docker build -t switchback-companion .
# Not built by CI (no Docker there); kept to the official images and standard steps.

FROM swift:6.3-noble AS build
WORKDIR /src
COPY . .
RUN swift build -c release --package-path Tools --product switchback-companion --static-swift-stdlib \
    && install -D "$(swift build -c release --package-path Tools --show-bin-path)/switchback-companion" /out/switchback-companion

FROM ubuntu:noble
# Foundation's networking links libcurl; the provider's and the database's certificates need the CA store.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates libcurl4 tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home switchback
COPY --from=build /out/switchback-companion /usr/local/bin/switchback-companion
USER 10001
# Mount the configuration here; set SWITCHBACK_SECRETS_DIRECTORY where the secrets are mounted, if any.
ENV SWITCHBACK_CONFIG=/etc/switchback/companion.json \
    SWITCHBACK_HOST=0.0.0.0
# The companion's routes, and Prometheus metrics when the configuration has a metrics section.
EXPOSE 8080 9464
# Docker's own health check (Kubernetes ignores it and uses its probes, Documentation/Deployment.md): the
# liveness route on the port the configuration gives. /health, not /ready: a provider outage must not get
# the container restarted. The start period covers the store's start, at most twice its 30 s timeout (the
# first connection, then the table). The check sees the environment, not the container's arguments: give the
# port, the configuration and the secrets as SWITCHBACK_PORT, SWITCHBACK_CONFIG and SWITCHBACK_SECRETS_DIRECTORY.
HEALTHCHECK --interval=15s --timeout=6s --start-period=65s --retries=3 \
    CMD ["/usr/local/bin/switchback-companion", "--probe", "/health"]
# SIGTERM drains (not ready, waiting requests answered, in-flight finished within limits.shutdownGrace).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/switchback-companion"]
