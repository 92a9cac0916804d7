sweep ReferenceJobAttackSurface --dp 64
