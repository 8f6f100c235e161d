#!/bin/sh
# Harbor's collect hook in the workspace sidecar, run once the agent's container has stopped: stop
# `taskforge serve`, which grades every episode still open as closed and completes its run, so the run folder
# Harbor then collects holds every episode the agent played.
set -eu
home="${TASKFORGE_HOME:-/srv}"
pid="$(cat "$home/serve.pid")"
kill -INT "$pid" 2>/dev/null || true
waited=0
while kill -0 "$pid" 2>/dev/null; do
    waited=$((waited + 1))
    if [ "$waited" -gt 300 ]; then
        echo "taskforge serve (pid $pid) did not stop within 30 s" >&2
        exit 1
    fi
    sleep 0.1
done
ls "$home"/runs/*/trials.jsonl
