def f(config):
    config.training.steps = 10
    config.training.steps = 20
