"""Plans: the typed subtask DAG, its validator, and the planners that produce it."""
