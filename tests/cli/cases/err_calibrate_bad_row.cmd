calibrate nccl_bad_row.txt
