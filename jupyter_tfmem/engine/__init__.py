"""The estimation engine: trace a step, take the graph TF runs, replay it."""
