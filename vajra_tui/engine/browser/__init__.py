"""Does a browser's compiler take the kernel: Tint under Node (Dawn), the badge it earns, and the sidecar install."""
