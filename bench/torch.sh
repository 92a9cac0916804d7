#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dpas.torch in `make bench` (Debian's python3-torch and python3-sklearn under /usr/bin/python3):
#  1. the step time of the hook's schedules beside DDP's own AllReduce, side by side (the
#     configurations interleaved round by round), with the machine's load noted: a 4.2 M
#     parameter MLP on N = 4 gloo processes. Goals (issue 23): allgather at most 2x the
#     AllReduce's step, sharded at most 1.2x. Reported, never asserted.
#  2. the benchmark's central experiment, small: ALIE with f = 2 of N = 6 on digits with
#     Dirichlet(0.1) splits, two robust rules with and without NNM and worker momentum, 3 seeds.
#     The full grid of docs/torch.md: python3 -m dpas.torch.bench (see that page).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
py=/usr/bin/python3
if ! $py -c 'import torch, sklearn' 2>/dev/null; then
  echo "dpas.torch bench: needs python3-torch and python3-sklearn (make deps)" >&2
  exit 1
fi
echo "== dpas.torch: step time beside DDP's AllReduce"
$py -m dpas.torch.bench --time --world-size 4
echo "== dpas.torch: ALIE, f = 2 of 6, digits, alpha 0.1"
$py -m dpas.torch.bench --world-size 6 --byzantine 2 --alpha 0.1 --steps 200 --lr 0.3 --seeds 3 \
  --rules median,centered_clipping --pre none,nnm --attacks none,alie --momentum 0,0.9 \
  --convention byzfl
