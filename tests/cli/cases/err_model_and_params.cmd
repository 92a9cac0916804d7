eval --model GPT3 --params 7B --fleet Training_1K --dp 8 --grad bf16 --ckpt 14B
