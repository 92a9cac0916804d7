show ReferenceJobAttackSurface --units iec --attr gradient_bytes,checkpoint_bytes
