#!/usr/bin/env bash
# The whole `npm test` (or the command given, e.g. `bash .ci/run` on a fresh clone) with a CPU hog
# beside it, as on a shared CI machine with other work running:
# HOGS busy loops (default 2, one per core of these machines), each bounded (it ends by itself
# after HOG_SECONDS, default 1800, even if this script is killed with SIGKILL), started here and
# stopped here by their own pids. Prints the command's elapsed time and its exit code, and exits
# with it. For `npm test`, put the node the suite should use first on PATH (.ci/run does that
# itself: Node.js 24).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  cat <<'USAGE'
usage: [HOGS=2] [HOG_SECONDS=1800] scripts/ci-under-load.sh [command …]

Runs the command (default: npm test) beside HOGS busy loops, as on a shared CI machine, and prints
its elapsed time and exit code; exits with that code. Each loop ends by itself after HOG_SECONDS.
USAGE
  exit 0
fi

hogs=${HOGS:-2}
hog_seconds=${HOG_SECONDS:-1800}
pids=()
stop_hogs() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap stop_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for _ in $(seq "$hogs"); do
  (
    end=$((SECONDS + hog_seconds))
    while ((SECONDS < end)); do :; done
  ) &
  pids+=("$!")
done
echo "ci-under-load: node $(node --version), ${hogs} busy loops (pids ${pids[*]}), load average $(cut -d' ' -f1-3 /proc/loadavg)"

command=("$@")
((${#command[@]})) || command=(npm test)
start=$(date +%s)
status=0
"${command[@]}" || status=$?
elapsed=$(($(date +%s) - start))
load=$(cut -d' ' -f1-3 /proc/loadavg)
stop_hogs
echo "ci-under-load: ${command[*]} exited ${status} after ${elapsed} s ($((elapsed / 60)) min $((elapsed % 60)) s) beside ${hogs} busy loops; load average at the end ${load}"
exit "$status"
