"""A small WGSL front end: tokens, statements, constant expressions, uniformity.

It is what lets Vajra read a candidate before the GPU compiler does: its
workgroup size and memory, its bindings, and barriers in non-uniform control
flow, which the sanitizer repairs.
"""
