def f(config):
    config.training.max_context_length = 0
    config.training.seq_len = 4096
