"""Commands about this machine's speed: ``bench --plan`` (measure the engine's plan: which form
of each product is fastest here) and the plan's printout shared with ``info --plan``."""
