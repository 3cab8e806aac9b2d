#!/usr/bin/env bash
# The whole `npm test` with a CPU hog beside it, as on a shared CI machine with other work running:
# HOGS busy loops (default 2, one per core of these machines), each bounded (it ends by itself
# after HOG_SECONDS, default 1800, even if this script is killed with SIGKILL), started here and
# stopped here by their own pids. Prints the suite's elapsed time and its exit code, and exits
# with it. Run it with the node the suite should use first on PATH (.ci/run puts Node.js 24 there).
set -euo pipefail
cd "$(dirname "$0")/.."

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

start=$(date +%s)
status=0
npm test || status=$?
elapsed=$(($(date +%s) - start))
load=$(cut -d' ' -f1-3 /proc/loadavg)
stop_hogs
echo "ci-under-load: npm test exited ${status} after ${elapsed} s ($((elapsed / 60)) min $((elapsed % 60)) s) beside ${hogs} busy loops; load average at the end ${load}"
exit "$status"
