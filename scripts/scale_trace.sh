#!/usr/bin/env bash
# The 10^5-job trace of docs/results.md ("Scale"): two consecutive copies of a 50,000-job Philly-derived workload for
# examples/clusters/c16k.json (16,384 GPUs), the second shifted after the first with its ids prefixed "q", every
# arrival time divided by 4 (four times the trace's arrival rate).
#   bash scripts/scale_trace.sh FRENZY_CLI OUT.csv
set -euo pipefail
cli="${1:?usage: scale_trace.sh FRENZY_CLI OUT.csv}"
out="${2:?usage: scale_trace.sh FRENZY_CLI OUT.csv}"
here="$(cd "$(dirname "$0")/.." && pwd)"
half="$(mktemp)"
trap 'rm -f "$half"' EXIT
"$cli" trace synth --cluster "$here/examples/clusters/c16k.json" --jobs 50000 --skip 0 --load 1 -o "$half"
awk -F, -v OFS=, 'NR == 1 { print; next }
  { n++; id[n] = $1; s[n] = $2; rest[n] = $0; if ($2 > m) m = $2 }
  END { for (c = 0; c < 2; c++) for (i = 1; i <= n; i++) { line = rest[i]; sub(/^[^,]*,[^,]*,/, "", line)
          printf "%s%s,%.3f,%s\n", (c ? "q" : ""), id[i], (s[i] + c * (m + 1)) / 4, line } }' "$half" > "$out"
