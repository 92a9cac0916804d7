show ReferenceJobAttackSurface --attr accelerators
