eval --params 70.6e9 --nodes 12 --accelerators-per-node 8 --dp 0 --grad bf16 --ckpt 14B -o json
