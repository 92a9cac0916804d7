eval --model GPT3 --fleet Training_1K --dp 128 --grad bf16 --ckpt 14B --attr weight_bytes
