list fabrics -o csv
