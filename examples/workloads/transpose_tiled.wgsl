// Tiled transpose: a TILE x TILE block of A staged in workgroup memory (rows padded by one,
// so reading a column of the block does not hit one memory bank), then written as rows of B.
// Each invocation moves TILE / (TILE / ROWS_PER_THREAD) = ROWS_PER_THREAD elements each way.
// tune: TILE = 8, 16, 32
// tune: ROWS_PER_THREAD = 1, 2, 4, 8
// require: TILE % ROWS_PER_THREAD == 0
// tile: TILE x TILE
override TILE: u32 = 16;
override ROWS_PER_THREAD: u32 = 4;

var<workgroup> block: array<f32, TILE * (TILE + 1)>;

@compute @workgroup_size(TILE, TILE / ROWS_PER_THREAD)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    if (t.y >= TILES_Y) {
        return;
    }
    let step = TILE / ROWS_PER_THREAD;
    let row0 = t.x * TILE;  // rows of A (columns of B) this workgroup covers
    let col0 = t.y * TILE;  // columns of A (rows of B)
    for (var k = 0u; k < TILE; k = k + step) {
        let r = row0 + lid.y + k;
        let c = col0 + lid.x;
        if (r < ROWS && c < COLS) {
            block[(lid.y + k) * (TILE + 1u) + lid.x] = A[r * COLS + c];
        }
    }
    workgroupBarrier();
    for (var k = 0u; k < TILE; k = k + step) {
        let br = col0 + lid.y + k;  // row of B
        let bc = row0 + lid.x;      // column of B
        if (br < COLS && bc < ROWS) {
            B[br * ROWS + bc] = block[lid.x * (TILE + 1u) + lid.y + k];
        }
    }
}
