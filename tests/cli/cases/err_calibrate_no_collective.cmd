calibrate nccl_no_collective.txt --ranks 8
