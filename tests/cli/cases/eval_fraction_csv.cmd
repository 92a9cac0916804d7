eval --params 3504873 --nodes 2 --accelerators-per-node 4 --dp 8 --grad "4.127 bit" --ckpt "14 bytes" --weights int4 -o csv
