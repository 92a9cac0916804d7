calibrate ../../../examples/nccl/all_reduce_perf_8ranks_synthetic.txt --predict 16MiB,1GiB,4GiB -o csv
