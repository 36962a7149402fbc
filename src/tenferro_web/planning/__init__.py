"""Pure planners: validation and lowering, no browser and no GPU."""
