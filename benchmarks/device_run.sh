#!/bin/bash
# The many-core measurements in one call, for a session lent a larger machine (the issue's
# 16-core targets: one process on every core, every split of the cores into ranks x threads,
# all-reduce at 8-16 ranks). Each section runs under its own timeout, so one hang cannot eat
# the machine's time; full logs go to $OUT, and the short tables are printed last.
#
# Where pyzmq is missing on that machine, bring it as a wheel for its Python, once:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 -d .whl pyzmq
# (keep .whl/ out of git: `echo /.whl/ >> .git/info/exclude`), then run this script from the
# checkout's root with .whl carried along. Outside such a call it writes to ./device-out.
set -u
OUT=${OUT:-device-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if ! python3 -c "import zmq" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PYTHONPATH
fi

{
    nproc
    grep -m1 "model name" /proc/cpuinfo
    python3 -c "import numpy, zmq; print('numpy', numpy.__version__, 'pyzmq', zmq.__version__)"
    python3 -c "import torch; print('torch', torch.__version__)" 2>&1 | tail -1
    python3 -c "import numba; print('numba', numba.__version__)" 2>&1 | tail -1
} | tee "$OUT/machine.log"

cores=$(nproc)
section() {  # name, seconds, command...
    local name=$1 seconds=$2
    shift 2
    echo "== $name (at most $seconds s)"
    timeout -k 5 "$seconds" "$@" > "$OUT/$name.log" 2>&1
    echo "exit $? after $SECONDS s in all"
}
section one_process 100 python3 benchmarks/train_step.py --threads "$cores" --steps 10 --clock wall --models cnn,gpt
section whole_machine 260 python3 benchmarks/whole_machine.py --steps 4
section collectives 100 python3 benchmarks/collectives.py --world 8,"$cores" --max-size 16M --budget 0.05 --rounds 2

for name in one_process whole_machine collectives; do
    echo "== $name"
    tail -n 24 "$OUT/$name.log"
done
