"""``torch.distributed.algorithms.model_averaging``: averaging the parameters of replicas that
stepped apart (post-local SGD). ``utils`` averages parameters in one all-reduce,
``averagers.PeriodicModelAverager`` every ``period`` steps after a warm-up,
``hierarchical_model_averager.HierarchicalModelAverager`` over groups of growing sizes."""
