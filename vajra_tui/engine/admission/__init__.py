"""Between a candidate's source text and the GPU: sanitize, stitch under the contract, stage, screen and fit the adapter."""
