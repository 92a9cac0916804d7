calibrate ../../data/nccl-real/06_gb10_2ranks_all_gather_one_size.txt --predict 16GiB -o csv
