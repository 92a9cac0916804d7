sweep --params 1e9 --nodes 4 --accelerators-per-node 8 --grad bf16 --ckpt 14B --dp 2,4 --schedule allreduce,allgather --attr bytes_per_worker,ratio_to_allreduce -o json
