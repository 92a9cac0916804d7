sweep ReferenceJobAttackSurface --dp 2,4 --grad bf16,fp32 --ckpt 4B,14B --rule median,krum
