sweep ReferenceJobAttackSurface --dp 64..2
