#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dpas.torch in `make bench` (Debian's python3-torch and python3-sklearn under /usr/bin/python3):
#  1. the step time of the hook's schedules beside DDP's own AllReduce, side by side (the
#     configurations interleaved round by round), with the machine's load noted: a 4.2 M
#     parameter MLP on N = 4 gloo processes. Goals (issue 23): allgather at most 2x the
#     AllReduce's step, sharded at most 1.2x. Reported, never asserted.
#  2. the benchmark's grid of docs/torch.md (simulated in one process with the hook's
#     aggregation code): Fashion-MNIST, the CNN, N in {7, 10, 13}, f in {1, 2, 3}, the honest
#     data on the honest workers only, the oracle, ALIE (z chosen on the validation split), FOE
#     and mimic, trimmed mean and centered clipping after NNM, 5 seeds (405 runs of a few
#     seconds of one core each; 2 at a time).
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
echo "== dpas.torch: the benchmark's grid (docs/torch.md)"
$py -m dpas.torch.bench --dataset fashion-mnist --model cnn --n 7,10,13 --f 1,2,3 --alpha 1 \
  --rules trimmed_mean,centered_clipping --pre nnm --attacks alie,foe,mimic \
  --grid alie:z=zmax,2 --momentum 0.9 --seeds 5 --steps 50 --lr 0.5 --batch 16 \
  --limit-test 5000 --jobs 2
