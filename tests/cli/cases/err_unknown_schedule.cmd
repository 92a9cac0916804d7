cost ReferenceJobAttackSurface --schedule ring
