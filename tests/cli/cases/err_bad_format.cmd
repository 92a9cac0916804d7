show ReferenceJobAttackSurface -o yaml
