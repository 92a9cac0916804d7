eval --model GTP3 --fleet Training_1K --dp 128 --grad bf16 --ckpt 14B -o json
