list gpus
