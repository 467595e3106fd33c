// fft2 at its seed size: the library's library: fft2/radix4 threads=64 cols=2 (written by Vajra's generator)
// FFT, Stockham radix-4 stages in registers, rows then cols.
@group(0) @binding(0) var<storage, read> X: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> Y: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> T: array<vec2<f32>>;
var<workgroup> sh: array<vec2<f32>, 512>;
fn twiddle(k: u32, m: u32) -> vec2<f32> {
    let r = select(i32(k), i32(k) - i32(m), 2u * k > m);
    let a = -6.283185307179586 * f32(r) / f32(m);
    return vec2<f32>(cos(a), sin(a));
}
fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// rows: 2 x 256-point FFTs per workgroup, 64 lanes each, radix 4-4-4-4, exchange vec2
// tune: CR = 2
const CR: u32 = {{CR}}u;
@compute @workgroup_size(128)
fn rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let c = lid.x % 2u;
    let lane = lid.x / 2u;
    let g = wid.x * CR + c;
    let b = wid.y;
    let sub = c * 256u;
    let ib = g * 256u;
    let ob = g * 256u;
    var v: array<vec2<f32>, 4>;
    v[0] = X[ib + (lane + 0u) * 1u];
    v[1] = X[ib + (lane + 64u) * 1u];
    v[2] = X[ib + (lane + 128u) * 1u];
    v[3] = X[ib + (lane + 192u) * 1u];
    {
        let j = lane + 0u;
        let ye0 = v[0] + v[2];
        let ye1 = v[0] - v[2];
        let yo0 = v[1] + v[3];
        let yo1 = v[1] - v[3];
        let y0 = ye0 + yo0;
        let y2 = ye0 - yo0;
        let yt1 = vec2<f32>(yo1.y, -yo1.x);
        let y1 = ye1 + yt1;
        let y3 = ye1 - yt1;
        v[0] = y0;
        v[1] = y1;
        v[2] = y2;
        v[3] = y3;
    }
    sh[sub + (((lane + 0u) / 1u) * 4u + ((lane + 0u) & 0u)) + 0u] = v[0];
    sh[sub + (((lane + 0u) / 1u) * 4u + ((lane + 0u) & 0u)) + 1u] = v[1];
    sh[sub + (((lane + 0u) / 1u) * 4u + ((lane + 0u) & 0u)) + 2u] = v[2];
    sh[sub + (((lane + 0u) / 1u) * 4u + ((lane + 0u) & 0u)) + 3u] = v[3];
    workgroupBarrier();
    v[0] = sh[sub + lane + 0u];
    v[1] = sh[sub + lane + 64u];
    v[2] = sh[sub + lane + 128u];
    v[3] = sh[sub + lane + 192u];
    workgroupBarrier();
    {
        let j = lane + 0u;
        let w1 = twiddle(j & 3u, 16u);
        let w2 = cmul(w1, w1);
        let w3 = cmul(w1, w2);
        let x1 = cmul(v[1], w1);
        let x2 = cmul(v[2], w2);
        let x3 = cmul(v[3], w3);
        let ye0 = v[0] + x2;
        let ye1 = v[0] - x2;
        let yo0 = x1 + x3;
        let yo1 = x1 - x3;
        let y0 = ye0 + yo0;
        let y2 = ye0 - yo0;
        let yt1 = vec2<f32>(yo1.y, -yo1.x);
        let y1 = ye1 + yt1;
        let y3 = ye1 - yt1;
        v[0] = y0;
        v[1] = y1;
        v[2] = y2;
        v[3] = y3;
    }
    sh[sub + (((lane + 0u) / 4u) * 16u + ((lane + 0u) & 3u)) + 0u] = v[0];
    sh[sub + (((lane + 0u) / 4u) * 16u + ((lane + 0u) & 3u)) + 4u] = v[1];
    sh[sub + (((lane + 0u) / 4u) * 16u + ((lane + 0u) & 3u)) + 8u] = v[2];
    sh[sub + (((lane + 0u) / 4u) * 16u + ((lane + 0u) & 3u)) + 12u] = v[3];
    workgroupBarrier();
    v[0] = sh[sub + lane + 0u];
    v[1] = sh[sub + lane + 64u];
    v[2] = sh[sub + lane + 128u];
    v[3] = sh[sub + lane + 192u];
    workgroupBarrier();
    {
        let j = lane + 0u;
        let w1 = twiddle(j & 15u, 64u);
        let w2 = cmul(w1, w1);
        let w3 = cmul(w1, w2);
        let x1 = cmul(v[1], w1);
        let x2 = cmul(v[2], w2);
        let x3 = cmul(v[3], w3);
        let ye0 = v[0] + x2;
        let ye1 = v[0] - x2;
        let yo0 = x1 + x3;
        let yo1 = x1 - x3;
        let y0 = ye0 + yo0;
        let y2 = ye0 - yo0;
        let yt1 = vec2<f32>(yo1.y, -yo1.x);
        let y1 = ye1 + yt1;
        let y3 = ye1 - yt1;
        v[0] = y0;
        v[1] = y1;
        v[2] = y2;
        v[3] = y3;
    }
    sh[sub + (((lane + 0u) / 16u) * 64u + ((lane + 0u) & 15u)) + 0u] = v[0];
    sh[sub + (((lane + 0u) / 16u) * 64u + ((lane + 0u) & 15u)) + 16u] = v[1];
    sh[sub + (((lane + 0u) / 16u) * 64u + ((lane + 0u) & 15u)) + 32u] = v[2];
    sh[sub + (((lane + 0u) / 16u) * 64u + ((lane + 0u) & 15u)) + 48u] = v[3];
    workgroupBarrier();
    v[0] = sh[sub + lane + 0u];
    v[1] = sh[sub + lane + 64u];
    v[2] = sh[sub + lane + 128u];
    v[3] = sh[sub + lane + 192u];
    workgroupBarrier();
    {
        let j = lane + 0u;
        let w1 = twiddle(j & 63u, 256u);
        let w2 = cmul(w1, w1);
        let w3 = cmul(w1, w2);
        let x1 = cmul(v[1], w1);
        let x2 = cmul(v[2], w2);
        let x3 = cmul(v[3], w3);
        let ye0 = v[0] + x2;
        let ye1 = v[0] - x2;
        let yo0 = x1 + x3;
        let yo1 = x1 - x3;
        let y0 = ye0 + yo0;
        let y2 = ye0 - yo0;
        let yt1 = vec2<f32>(yo1.y, -yo1.x);
        let y1 = ye1 + yt1;
        let y3 = ye1 - yt1;
        v[0] = y0;
        v[1] = y1;
        v[2] = y2;
        v[3] = y3;
    }
    T[ob + (lane + 0u) * 1u] = v[0];
    T[ob + (lane + 64u) * 1u] = v[1];
    T[ob + (lane + 128u) * 1u] = v[2];
    T[ob + (lane + 192u) * 1u] = v[3];
}

// cols: 2 x 256-point FFTs per workgroup, 64 lanes each, radix 4-4-4-4, exchange vec2
// tune: CC = 2
const CC: u32 = {{CC}}u;
@compute @workgroup_size(128)
fn cols(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let c = lid.x % 2u;
    let lane = lid.x / 2u;
    let g = wid.x * CC + c;
    let b = wid.y;
    let sub = c * 256u;
    let ib = g;
    let ob = g;
    var v: array<vec2<f32>, 4>;
    v[0] = T[ib + (lane + 0u) * 256u];
    v[1] = T[ib + (lane + 64u) * 256u];
    v[2] = T[ib + (lane + 128u) * 256u];
    v[3] = T[ib + (lane + 192u) * 256u];
    {
        let j = lane + 0u;
        let ye0 = v[0] + v[2];
        let ye1 = v[0] - v[2];
        let yo0 = v[1] + v[3];
        let yo1 = v[1] - v[3];
        let y0 = ye0 + yo0;
        let y2 = ye0 - yo0;
        let yt1 = vec2<f32>(yo1.y, -yo1.x);
        let y1 = ye1 + yt1;
        let y3 = ye1 - yt1;
        v[0] = y0;
        v[1] = y1;
        v[2] = y2;
        v[3] = y3;
    }
    sh[sub + (((lane + 0u) / 1u) * 4u + ((lane + 0u) & 0u)) + 0u] = v[0];
    sh[sub + (((lane + 0u) / 1u) * 4u + ((lane + 0u) & 0u)) + 1u] = v[1];
    sh[sub + (((lane + 0u) / 1u) * 4u + ((lane + 0u) & 0u)) + 2u] = v[2];
    sh[sub + (((lane + 0u) / 1u) * 4u + ((lane + 0u) & 0u)) + 3u] = v[3];
    workgroupBarrier();
    v[0] = sh[sub + lane + 0u];
    v[1] = sh[sub + lane + 64u];
    v[2] = sh[sub + lane + 128u];
    v[3] = sh[sub + lane + 192u];
    workgroupBarrier();
    {
        let j = lane + 0u;
        let w1 = twiddle(j & 3u, 16u);
        let w2 = cmul(w1, w1);
        let w3 = cmul(w1, w2);
        let x1 = cmul(v[1], w1);
        let x2 = cmul(v[2], w2);
        let x3 = cmul(v[3], w3);
        let ye0 = v[0] + x2;
        let ye1 = v[0] - x2;
        let yo0 = x1 + x3;
        let yo1 = x1 - x3;
        let y0 = ye0 + yo0;
        let y2 = ye0 - yo0;
        let yt1 = vec2<f32>(yo1.y, -yo1.x);
        let y1 = ye1 + yt1;
        let y3 = ye1 - yt1;
        v[0] = y0;
        v[1] = y1;
        v[2] = y2;
        v[3] = y3;
    }
    sh[sub + (((lane + 0u) / 4u) * 16u + ((lane + 0u) & 3u)) + 0u] = v[0];
    sh[sub + (((lane + 0u) / 4u) * 16u + ((lane + 0u) & 3u)) + 4u] = v[1];
    sh[sub + (((lane + 0u) / 4u) * 16u + ((lane + 0u) & 3u)) + 8u] = v[2];
    sh[sub + (((lane + 0u) / 4u) * 16u + ((lane + 0u) & 3u)) + 12u] = v[3];
    workgroupBarrier();
    v[0] = sh[sub + lane + 0u];
    v[1] = sh[sub + lane + 64u];
    v[2] = sh[sub + lane + 128u];
    v[3] = sh[sub + lane + 192u];
    workgroupBarrier();
    {
        let j = lane + 0u;
        let w1 = twiddle(j & 15u, 64u);
        let w2 = cmul(w1, w1);
        let w3 = cmul(w1, w2);
        let x1 = cmul(v[1], w1);
        let x2 = cmul(v[2], w2);
        let x3 = cmul(v[3], w3);
        let ye0 = v[0] + x2;
        let ye1 = v[0] - x2;
        let yo0 = x1 + x3;
        let yo1 = x1 - x3;
        let y0 = ye0 + yo0;
        let y2 = ye0 - yo0;
        let yt1 = vec2<f32>(yo1.y, -yo1.x);
        let y1 = ye1 + yt1;
        let y3 = ye1 - yt1;
        v[0] = y0;
        v[1] = y1;
        v[2] = y2;
        v[3] = y3;
    }
    sh[sub + (((lane + 0u) / 16u) * 64u + ((lane + 0u) & 15u)) + 0u] = v[0];
    sh[sub + (((lane + 0u) / 16u) * 64u + ((lane + 0u) & 15u)) + 16u] = v[1];
    sh[sub + (((lane + 0u) / 16u) * 64u + ((lane + 0u) & 15u)) + 32u] = v[2];
    sh[sub + (((lane + 0u) / 16u) * 64u + ((lane + 0u) & 15u)) + 48u] = v[3];
    workgroupBarrier();
    v[0] = sh[sub + lane + 0u];
    v[1] = sh[sub + lane + 64u];
    v[2] = sh[sub + lane + 128u];
    v[3] = sh[sub + lane + 192u];
    workgroupBarrier();
    {
        let j = lane + 0u;
        let w1 = twiddle(j & 63u, 256u);
        let w2 = cmul(w1, w1);
        let w3 = cmul(w1, w2);
        let x1 = cmul(v[1], w1);
        let x2 = cmul(v[2], w2);
        let x3 = cmul(v[3], w3);
        let ye0 = v[0] + x2;
        let ye1 = v[0] - x2;
        let yo0 = x1 + x3;
        let yo1 = x1 - x3;
        let y0 = ye0 + yo0;
        let y2 = ye0 - yo0;
        let yt1 = vec2<f32>(yo1.y, -yo1.x);
        let y1 = ye1 + yt1;
        let y3 = ye1 - yt1;
        v[0] = y0;
        v[1] = y1;
        v[2] = y2;
        v[3] = y3;
    }
    Y[ob + (lane + 0u) * 256u] = v[0];
    Y[ob + (lane + 64u) * 256u] = v[1];
    Y[ob + (lane + 128u) * 256u] = v[2];
    Y[ob + (lane + 192u) * 256u] = v[3];
}
