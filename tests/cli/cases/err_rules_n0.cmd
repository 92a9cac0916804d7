rules --n 0
