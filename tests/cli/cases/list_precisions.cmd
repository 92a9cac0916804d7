list precisions
