// Writes nothing: the NaN-poisoned output must fail verification.
@compute @workgroup_size(64)
fn main() {
}
