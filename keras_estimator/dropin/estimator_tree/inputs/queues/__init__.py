"""2.15's `inputs/queues` package: the feed functions of its queue-era input_fns."""
