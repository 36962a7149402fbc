"""The runtime layer: the device, its buffers, pipelines, submission and tensors."""
