eval --model GPT3 --fleet Training_1K --dp 8 --grad bf16 --ckpt 14B --weights NaN
