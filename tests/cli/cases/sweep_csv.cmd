sweep --params 1e9 --nodes 4 --accelerators-per-node 8 --grad bf16 --ckpt 14B --dp 2,4,8 -o csv
