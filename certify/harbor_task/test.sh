#!/bin/sh
# Harbor's verifier for an exported taskforge task. It runs in its own container after the agent's has stopped,
# on the run the workspace sidecar recorded (collected to /srv/runs), and writes /logs/verifier/reward.txt,
# reward.json and verdict.json. Nothing here reaches the agent: Harbor builds this image from tests/ only.
set -eu
here="$(dirname "$0")"
exec python3 "$here/verdict.py" "$here/expected.json"
