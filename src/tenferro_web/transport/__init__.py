"""Transports: the only code that talks to a WebGPU implementation."""
