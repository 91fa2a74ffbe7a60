# A Baton worker: `baton mcp serve` over HTTP inside a sandbox image.
#
#   docker build -t baton-worker .
#   docker run --rm -p 8765:8765 -v "$PWD/token:/var/run/secrets/baton/token:ro" baton-worker
#
# Stage 1 builds the binary with the pinned toolchain and lock file.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin baton \
 && strip target/release/baton

# Stage 2 is what the tools need at run time and nothing else: bash for the
# Bash tool, git and ripgrep for the commands agents run, procps for ps.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates git ripgrep procps \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 baton \
 && mkdir -p /workspace && chown baton:baton /workspace
COPY --from=build /src/target/release/baton /usr/local/bin/baton
USER 10001
WORKDIR /workspace
EXPOSE 8765
# Exec form: Baton is PID 1. It is a child subreaper and reaps every
# orphan, so no init shim is needed; SIGTERM stops running calls and their
# processes before the server exits.
ENTRYPOINT ["/usr/local/bin/baton", "mcp", "serve", \
            "--http", "0.0.0.0:8765", \
            "--token-file", "/var/run/secrets/baton/token", \
            "--allowed-host", "*", \
            "--permission-mode", "bypassPermissions", \
            "--cwd", "/workspace"]
