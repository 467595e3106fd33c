"""Vajra: a terminal auto-tuner for WebGPU compute kernels."""

__version__ = "0.1.0"
