cost --params 7e9 --nodes 2 --accelerators-per-node 8 --dp 4 --grad bf16 --ckpt 14B --rule median --schedule allgather,sharded
