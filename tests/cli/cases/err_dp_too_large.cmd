eval --model GPT3 --fleet Training_1K --dp 2048 --grad bf16 --ckpt 14B
