"""`train_and_evaluate` with TrainSpec / EvalSpec: the local loop of training and
evaluation with exporters, and the distributed (chief / worker / evaluator) executor."""
