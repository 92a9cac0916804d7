eval --model GPT3 --fleet Training_1K --dp 128 --grad 2 --ckpt 14B
