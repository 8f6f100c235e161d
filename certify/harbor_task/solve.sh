#!/bin/sh
# Harbor's oracle for an exported taskforge task: plays the task's reference over MCP against the workspace
# sidecar, then gives the final answer; the sidecar grades the episode like any agent's.
set -eu
here="$(dirname "$0")"
exec python3 "$here/play.py" "$here/reference.json"
