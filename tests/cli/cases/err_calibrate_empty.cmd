calibrate nccl_empty.txt
