"""Beyond one GPU: adapters of one host (``--gpus``) and of a Ray cluster (``--ray``, ``fleet``).

Everything here drives *lanes*: one GPU worker per adapter, local or remote, each with
the same async interface as :class:`..gpu.client.GPUClient` (see :mod:`.lane`).
"""
