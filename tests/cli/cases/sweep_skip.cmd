sweep --params 1e9 --nodes 4 --accelerators-per-node 8 --grad bf16 --ckpt 14B --dp 16,64 -o csv
