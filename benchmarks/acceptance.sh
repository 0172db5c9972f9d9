#!/bin/bash
# The speed acceptance of the one-row and fit paths, old build against new in one run (benchmarks/archive/RESULTS-2026-11.md).
#   OLD_PY, NEW_PY: the Python interpreters of each build (fat LTO, as released); or one
#   interpreter for both with OLD_PYTHONPATH, NEW_PYTHONPATH: the directories holding each
#   build's cwrs package (an interpreter binary, not a wrapper script: valgrind does not follow
#   a script's exec);
#   OLD_BENCH, NEW_BENCH: each build's criterion binary (`cargo bench --bench core --no-run`).
# Prints callgrind instruction counts of the native partial_fit (fits) and of a whole process
# (one-row calls), then three interleaved rounds of the criterion benchmarks.
set -e
out=${OUT:-/tmp/acceptance}
mkdir -p "$out/old" "$out/new"
here=$(cd "$(dirname "$0")" && pwd)
count() {  # which, label, args...: callgrind, then the native partial_fit's inclusive count
  local which=$1 label=$2; shift 2
  local py=OLD_PY path=OLD_PYTHONPATH
  [ "$which" = new ] && py=NEW_PY path=NEW_PYTHONPATH
  PYTHONPATH="${!path:-${PYTHONPATH:-}}" \
  valgrind --tool=callgrind --callgrind-out-file="$out/$which.$label.cg" "${!py}" \
    "$here/acceptance_cg.py" "$@" > "$out/$which.$label.log" 2>&1
}
for rule in AROW SCW1 PA1; do
  for which in old new; do
    count $which fit-$rule fit $rule
    echo "$which fit $rule: $(callgrind_annotate --inclusive=yes "$out/$which.fit-$rule.cg" \
      | grep -E 'cwrs::model::(Estimator|Model)::partial_fit \[|cwrs::estimator::Estimator::partial_fit \[|Learner::partial_fit \[' | head -1 | awk '{print $1}')"
  done
done
for which in old new; do
  for n in 1000 3000; do
    count $which one-row-$n one-row $n
    echo "$which one-row $n calls: $(grep refs "$out/$which.one-row-$n.log" | awk '{print $NF}')"
  done
done
filter='diag_sparse|full_arow_dense/1000$|kernel_arow_rbf_d100/(100|1000)$'
for round in 1 2 3; do
  for which in old new; do
    bench=OLD_BENCH; [ "$which" = new ] && bench=NEW_BENCH
    (cd "$out/$which" && "${!bench}" --bench "$filter" --noplot --warm-up-time 1 \
      --measurement-time 3 2>&1 | grep -E "time:|^(diag|full|kernel)" | sed "s/^/$round $which /")
  done
done
