sweep ReferenceJobAttackSurface --dp 2..64 --plot out.eps
