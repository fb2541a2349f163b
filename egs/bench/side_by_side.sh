#!/usr/bin/env bash
# One `tts` benchmark run alternately on an earlier commit and on the working tree, so that the two
# are timed in the same hour on the same machine (speeds compare only as ratios measured together:
# docs/speed.md). Each run is a fresh process; the earlier commit runs from a temporary worktree.
#   bash egs/bench/side_by_side.sh [--rounds 3] [--pause PGID ...] REV OUT -- tts bench ARGS...
# OUT/old_<round>.json and OUT/new_<round>.json: each run's stdout (the benchmark's JSON);
# OUT/runs.json: both commits, the CPU, the date and the command. --pause PGID stops a process group
# (a training run) for the duration and continues it after, whatever happens (repeat it for several).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD; PY=${PY:-$root/.venv/bin/python}
rounds=3; paused=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2;;
    --pause) paused+=("$2"); shift 2;;
    *) break;;
  esac
done
[ $# -ge 4 ] && [ "$3" = "--" ] && [ "$4" = "tts" ] || {
  echo "usage: side_by_side.sh [--rounds N] [--pause PGID ...] REV OUT -- tts bench ARGS..." >&2; exit 2; }
rev=$(git rev-parse --short "$1") || { echo "error: $1 is not a commit of this repository" >&2; exit 2; }
out=$2; shift 4
mkdir -p "$out"
tree=$(mktemp -d /tmp/side_by_side.XXXXXX)
source egs/bench/pause_groups.sh
cleanup() {
  resume_groups
  git worktree remove --force "$tree" 2>/dev/null || true
}
trap cleanup EXIT
git worktree add --detach -q "$tree" "$rev"
pause_groups "${paused[@]+"${paused[@]}"}"
for round in $(seq 1 "$rounds"); do
  for side in old new; do
    dir=$root; [ "$side" = old ] && dir=$tree
    echo "[$(date +%H:%M:%S)] round $round, $side" >&2
    (cd "$dir" && "$PY" -m tts.cli "$@" > "$root/$out/${side}_$round.json")
  done
done
"$PY" - "$out/runs.json" "$rev" "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' + uncommitted changes')" \
  "tts $*" <<'PYEOF'
import json, sys, time
from tts.devices import cpu_instructions, cpu_model
path, old, new, command = sys.argv[1:5]
json.dump({"old": old, "new": new, "command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "cpu": cpu_model(), "cpu_instructions": cpu_instructions()},
          open(path, "w"), indent=1)
PYEOF
echo "side by side: $out" >&2
