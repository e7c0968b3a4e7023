#!/bin/sh
# Logit ESS per second of a default `pwe fit` in the setting of Stan's
# figure (DESIGN.md section 6: V = 200, D = 10, N = 10^5), end to end:
# simulate, fit with every default on 2 threads (timed), then the median
# bulk ESS of sigmoid(rho_i . alpha_j) over 2000 random pairs from
# `pwe summarize` (bulk ESS is rank-based, so it is the logit's).
# Needs DuckDB from testdata/duckdb (npm ci there).
#
# usage: testdata/bench/stan-comparison.sh PWE_BINARY OUTDIR [zipf|uniform]
set -e
pwe=$(realpath "$1")
out=$2
law=${3:-zipf}
here=$(dirname "$(realpath "$0")")
mkdir -p "$out"
cd "$out"
zipf=""
[ "$law" = zipf ] && zipf=--zipf
"$pwe" --quiet simulate --vocab-size 200 --dim 10 --observations 1e5 $zipf --seed 42 -o sim
/usr/bin/time -f "fit wall %e s, CPU %U + %S s, peak RSS %M kB" \
	"$pwe" --quiet fit --counts sim/counts.parquet --vocab sim/vocab.parquet --dim 10 --threads 2 -o fit
awk 'BEGIN { srand(1); for (k = 0; k < 2000; k++) printf "w%04d\tw%04d\n", int(rand() * 200), int(rand() * 200) }' > pairs.txt
"$pwe" --quiet summarize fit --pairs pairs.txt -o sum
printf '%s' "{\"logits\": \"SELECT median(ess_bulk) AS ess_median, max(rhat) AS rhat_max FROM read_parquet('$PWD/sum/similarity.parquet') WHERE quantity = 'cooccurrence_prob'\"}" |
	node "$here/../duckdb/query.mjs"
echo
