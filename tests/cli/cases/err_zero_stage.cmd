memory ReferenceJobAttackSurface --zero 5
