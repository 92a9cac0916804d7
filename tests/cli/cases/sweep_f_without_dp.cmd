sweep --params 1e9 --nodes 4 --accelerators-per-node 8 --grad bf16 --ckpt 14B --f 0..2+1 --rule krum -o csv
