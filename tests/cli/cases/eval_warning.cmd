eval --model GPT3 --fleet Training_1K --dp 96 --grad bf16 --ckpt 14B --attr accelerators_per_replica
