show ReferenceJobAttackSurface -o markdown
