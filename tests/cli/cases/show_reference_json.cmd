show Scenarios.ReferenceJobAttackSurface -o json
