eval --node DGX_A100 --nodes 16 --accelerators-per-node 4 --model Llama3_8B --dp 64 --grad bf16 --ckpt bf16 --weights bf16
