show ReferenceJobAttackSurface --dp 1 --attr gather_traffic_ratio -o json
