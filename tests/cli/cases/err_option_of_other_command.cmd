inventory ReferenceJobAttackSurface --rule median
