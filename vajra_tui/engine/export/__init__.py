"""What leaves Vajra for the web: the exact WGSL, a TypeScript dispatch module and the lockfile."""
