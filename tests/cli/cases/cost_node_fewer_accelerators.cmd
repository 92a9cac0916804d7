cost --node DGX_A100 --fabric InfiniBand_HDR --nodes 16 --accelerators-per-node 4 --model Llama3_8B --dp 64 --grad bf16 --ckpt bf16 --rule median --schedule allgather,sharded
