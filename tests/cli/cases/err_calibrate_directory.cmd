calibrate .
