#!/bin/sh
# The workspace sidecar of an exported taskforge task: `taskforge serve` over Streamable HTTP for the agent's
# container, one graded episode per MCP session, trials written under $TASKFORGE_HOME/runs. The server runs in
# the background so the container outlives it: after the agent phase, collect.sh stops it (open episodes are
# graded as closed) and Harbor copies the run from this container to the verifier.
set -eu
home="${TASKFORGE_HOME:-/srv}"
set -- serve --taskset "$home/taskset" --transport http --host "${TASKFORGE_BIND:-0.0.0.0}" \
    --port "${TASKFORGE_PORT:-8000}" --runs-dir "$home/runs"
if [ -d "$home/world" ]; then
    set -- "$@" --world "$home/world"
fi
"${TASKFORGE:-taskforge}" "$@" &
echo "$!" > "$home/serve.pid"
wait "$!" || true
if [ "${TASKFORGE_KEEPALIVE:-1}" = 1 ]; then
    exec sleep infinity
fi
