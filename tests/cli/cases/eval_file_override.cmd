eval job.yaml --dp 48 --weights fp8
