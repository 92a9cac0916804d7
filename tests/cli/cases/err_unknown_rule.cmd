cost ReferenceJobAttackSurface --rule krumm
