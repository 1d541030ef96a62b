#!/bin/sh
# Apache Otava beside this detector, on the same generated set (Otava pins numpy: it gets its own venv).
#   bench/otava_compare.sh [N_SERIES=400] [SEED=1] [PROFILE=default] [ONLINE_LIMIT=20]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EVAL=${EVAL_DIR:-$ROOT/../shared/eval}
N=${1:-400}; SEED=${2:-1}; PROFILE=${3:-default}; LIMIT=${4:-20}
VENV=${OTAVA_VENV:-/tmp/otava-venv}
WORK=$(mktemp -d /tmp/otava-compare.XXXXXX)
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import otava" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q apache-otava || { echo "apache-otava could not be installed from the package index"; exit 1; }
fi
python3 "$EVAL/gen_series.py" --n "$N" --seed "$SEED" --profile "$PROFILE" --out "$WORK/s.jsonl" --truth "$WORK/t.jsonl"
echo "== Otava $("$VENV/bin/pip" show apache-otava | sed -n 's/^Version: //p') (window 50, p<0.001), hindsight, all $N series; online (incremental) on the first $LIMIT"
"$VENV/bin/python" "$ROOT/bench/baselines/otava_runner.py" "$WORK/s.jsonl" "$WORK/otava.jsonl" \
  --online-out "$WORK/otava-online.jsonl" --online-limit "$LIMIT"
python3 "$EVAL/score.py" --truth "$WORK/t.jsonl" --detected "$WORK/otava.jsonl"
head -n "$LIMIT" "$WORK/t.jsonl" > "$WORK/t-limit.jsonl"
echo "-- Otava online, first $LIMIT series"
python3 "$EVAL/score.py" --truth "$WORK/t-limit.jsonl" --detected "$WORK/otava-online.jsonl"
echo "== this detector, online, all $N series"
"$ROOT/.venv/bin/python" -c "import sys, time; sys.path.insert(0, '$ROOT'); from perfplatform.detect_cmd import run; t=time.process_time(); run('$WORK/s.jsonl', online=True, out=open('$WORK/ours.jsonl', 'w')); print('cpu_s (incl. parsing)', round(time.process_time()-t, 3), file=sys.stderr)"
python3 "$EVAL/score.py" --truth "$WORK/t.jsonl" --detected "$WORK/ours.jsonl"
echo "(work files in $WORK)"
