calibrate ../../../examples/nccl/all_reduce_perf_8ranks_synthetic.txt -o csv
