#!/bin/sh
# The benchmark of issue 2: pwe tokenize + pwe count on bench-raw against
# GloVe's cooccur, in alternating rounds on the same host (BENCHMARKS.md,
# "pwe tokenize + pwe count on bench-raw").
#
# usage:
#   testdata/bench/issue2.sh rounds R PWE...       one thread; each round runs
#       cooccur, then for each pwe binary tokenize, count at 256MiB and count
#       at 1GiB
#   testdata/bench/issue2.sh threads R MEM PWE...  each round runs, for each
#       binary, tokenize and count (at MEM) on 1 thread and then on 2
#   testdata/bench/issue2.sh cooccur R             cooccur alone
#   testdata/bench/issue2.sh pair R MEM PWE...     each round runs, for each
#       binary, tokenize and then count (at MEM) on one thread alone (stages
#       tok-solo, cnt-solo), as two one-thread runs side by side (tok-pair1
#       and tok-pair2, cnt-pair1 and cnt-pair2) and on two threads (tok-two,
#       cnt-two): the
#       side-by-side runs show what the host alone adds to a second core's
#       work, and the two-thread run what pwe's parallel work adds to that
#
# Every run prints one line: round, binary (by base name, so binaries
# compared must have different names), stage, user s, system s, wall s,
# peak RSS kB. Summarise with
#   testdata/bench/issue2.sh rounds 8 ./pwe | go run ./testdata/bench/issue2sum
#
# Environment:
#   WORK         scratch directory (default /tmp/pwe-issue2); the corpus is
#                decompressed into it once, and the runs write there
#   CORPUS       the zstd text (default ../shared/data/bench-raw.txt.zst)
#   COOCCUR      GloVe's cooccur, built outside the repository (sessions 6
#                and 20: stanfordnlp/GloVe with its makefile's flags)
#   GLOVE_VOCAB  vocab_count -max-vocab 65536 < bench.txt > vocab.txt
# Both stages of pwe and cooccur read the same decompressed text, in the
# page cache after the first round. Binaries alternate within each round,
# so that a comparison between them sees the same state of a shared host,
# in the order given in odd rounds and reversed in even ones.
set -e
usage() {
	echo "usage: $0 rounds R PWE... | threads R MEM PWE... | pair R MEM PWE... | cooccur R" >&2
	exit 2
}
[ $# -ge 2 ] || usage
mode=$1
rounds=$2
shift 2
case $mode in
rounds) [ $# -ge 1 ] || usage ;;
threads | pair) [ $# -ge 2 ] || usage ;;
cooccur) ;;
*) usage ;;
esac
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${WORK:-/tmp/pwe-issue2}
corpus=${CORPUS:-$here/../shared/data/bench-raw.txt.zst}
mkdir -p "$work"
if [ ! -s "$work/bench.txt" ]; then
	zstd -dc "$corpus" > "$work/bench.txt.tmp"
	mv "$work/bench.txt.tmp" "$work/bench.txt"
fi

mem=
if [ "$mode" = threads ] || [ "$mode" = pair ]; then
	mem=$1
	shift
fi
# The binaries, by absolute path, and their names in the output.
bins=
for b in "$@"; do
	bins="$bins $(cd "$(dirname "$b")" && pwd)/$(basename "$b")"
done
cd "$work"

# timed ROUND NAME STAGE COMMAND...: runs the command, its output discarded,
# and prints its line.
timed() {
	r=$1 name=$2 stage=$3
	shift 3
	/usr/bin/time -o time.txt -f "%U %S %e %M" "$@" > /dev/null 2> stderr.txt || {
		cat stderr.txt >&2
		exit 1
	}
	echo "$r $name $stage $(cat time.txt)"
}

# side ROUND NAME STAGE COMMAND1 -- COMMAND2: runs the two commands side by
# side, their output discarded, and prints a line for each.
side() {
	r=$1 name=$2 stage=$3
	shift 3
	first=
	while [ "$1" != -- ]; do
		first="$first $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # first is split into the words it was made of
	/usr/bin/time -o time1.txt -f "%U %S %e %M" $first > /dev/null 2> stderr1.txt &
	pid=$!
	ok=0
	/usr/bin/time -o time2.txt -f "%U %S %e %M" "$@" > /dev/null 2> stderr2.txt || ok=$?
	wait $pid || ok=$?
	if [ $ok -ne 0 ]; then
		cat stderr1.txt stderr2.txt >&2
		exit 1
	fi
	echo "$r $name ${stage}1 $(cat time1.txt)"
	echo "$r $name ${stage}2 $(cat time2.txt)"
}

cooccur() {
	: "${COOCCUR:?set COOCCUR to GloVe's cooccur}" "${GLOVE_VOCAB:?set GLOVE_VOCAB to vocab_count's output}"
	/usr/bin/time -o time.txt -f "%U %S %e %M" "$COOCCUR" -window-size 5 -symmetric 1 -memory 4.0 \
		-vocab-file "$GLOVE_VOCAB" < bench.txt > cooc.bin 2> stderr.txt
	echo "$1 cooc cooc $(cat time.txt)"
}

# The binaries of round r: in the order given in odd rounds, reversed in
# even ones. The first binary after cooccur (which frees 861 MB) ran
# slower on some hosts (BENCHMARKS.md, session 35), so a fixed order would
# favour the later ones.
ordered() {
	if [ $(($1 % 2)) -eq 1 ]; then
		echo $bins
	else
		rev=
		for b in $bins; do
			rev="$b $rev"
		done
		echo $rev
	fi
}

for r in $(seq "$rounds"); do
	case $mode in
	cooccur)
		cooccur "$r"
		;;
	rounds)
		cooccur "$r"
		for b in $(ordered "$r"); do
			n=$(basename "$b")
			timed "$r" "$n" tok "$b" --quiet tokenize bench.txt --max-vocab 65536 --threads 1 -o "v_$n.parquet" --tokens "t_$n.bin"
			for m in 256MiB 1GiB; do
				timed "$r" "$n" "c$m" "$b" --quiet count --tokens "t_$n.bin" --vocab "v_$n.parquet" --memory $m --threads 1 -o "c_$n.parquet"
			done
		done
		;;
	threads)
		for b in $(ordered "$r"); do
			n=$(basename "$b")
			for t in 1 2; do
				timed "$r" "$n" "tok$t" "$b" --quiet tokenize bench.txt --max-vocab 65536 --threads $t -o "v_$n.parquet" --tokens "t_$n.bin"
				timed "$r" "$n" "cnt$t" "$b" --quiet count --tokens "t_$n.bin" --vocab "v_$n.parquet" --memory "$mem" --threads $t -o "c_$n.parquet"
			done
		done
		;;
	pair)
		for b in $(ordered "$r"); do
			n=$(basename "$b")
			tok() { echo "$b --quiet tokenize bench.txt --max-vocab 65536 --threads $1 -o v_$n$2.parquet --tokens t_$n$2.bin"; }
			cnt() { echo "$b --quiet count --tokens t_$n.bin --vocab v_$n.parquet --memory $mem --threads $1 -o c_$n$2.parquet"; }
			# shellcheck disable=SC2046 # the commands are split into words
			timed "$r" "$n" tok-solo $(tok 1 "")
			# shellcheck disable=SC2046
			side "$r" "$n" tok-pair $(tok 1 _a) -- $(tok 1 _b)
			# shellcheck disable=SC2046
			timed "$r" "$n" tok-two $(tok 2 "")
			# shellcheck disable=SC2046
			timed "$r" "$n" cnt-solo $(cnt 1 "")
			# shellcheck disable=SC2046
			side "$r" "$n" cnt-pair $(cnt 1 _a) -- $(cnt 1 _b)
			# shellcheck disable=SC2046
			timed "$r" "$n" cnt-two $(cnt 2 "")
		done
		;;
	esac
done
