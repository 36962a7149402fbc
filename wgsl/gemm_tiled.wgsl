// Batched GEMM for GPUs: BM x BK and BK x BN tiles staged through workgroup memory, a TM x TN
// register block per invocation (a 16 x 16 workgroup, so BM = 16*TM, BN = 16*TN).
//   c[m + M*n + M*N*bi] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides; likewise B), so
// transposed and offset operands are read in place. Tile loads make neighbouring invocations
// read neighbouring addresses: along m or k for A (A_K_FAST), along k or n for B (B_K_FAST),
// whichever the operand keeps contiguous. Out-of-range elements load as zero.
// params: [M, N, K, batch, tiles_m, tiles_n, a_off, a_rs, a_cs, a_bs, b_off, b_rs, b_cs, b_bs,
//          a_conj_sign (f32 bits), b_conj_sign (f32 bits)]

#include "scalar_{{SCALAR}}.wgsl"

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<Scalar>;
@group(0) @binding(2) var<storage, read> b: array<Scalar>;
@group(0) @binding(3) var<storage, read_write> c: array<Scalar>;

const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const BK: u32 = {{BK}}u;
const A_K_FAST: bool = {{A_K_FAST}};
const B_K_FAST: bool = {{B_K_FAST}};
const W: u32 = 16u;
const BM: u32 = W * TM;
const BN: u32 = W * TN;
const THREADS: u32 = W * W;

var<workgroup> a_tile: array<Scalar, BK * BM>;  // [k][m]
var<workgroup> b_tile: array<Scalar, BK * BN>;  // [k][n]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) flat: u32) {
  let M = params[0];
  let N = params[1];
  let K = params[2];
  let tiles_m = params[4];
  let tiles = tiles_m * params[5];
  let group = wid.y * nwg.x + wid.x;
  let bi = group / tiles;
  if (bi >= params[3]) {
    return;
  }
  let t = group % tiles;
  let m_base = (t % tiles_m) * BM;
  let n_base = (t / tiles_m) * BN;
  let a_rs = bitcast<i32>(params[7]);
  let a_cs = bitcast<i32>(params[8]);
  let b_rs = bitcast<i32>(params[11]);
  let b_cs = bitcast<i32>(params[12]);
  let a_base = bitcast<i32>(params[6]) + i32(bi) * bitcast<i32>(params[9]);
  let b_base = bitcast<i32>(params[10]) + i32(bi) * bitcast<i32>(params[13]);
  let a_sign = bitcast<f32>(params[14]);
  let b_sign = bitcast<f32>(params[15]);

  var acc: array<Scalar, TM * TN>;
  var av: array<Scalar, TM>;
  var bv: array<Scalar, TN>;
  for (var k0 = 0u; k0 < K; k0 += BK) {
    for (var l = flat; l < BK * BM; l += THREADS) {
      var mi: u32;
      var ki: u32;
      if (A_K_FAST) { ki = l % BK; mi = l / BK; } else { mi = l % BM; ki = l / BM; }
      let m = m_base + mi;
      let k = k0 + ki;
      var v = Scalar();  // explicit zero: out-of-range elements must contribute nothing
      if (m < M && k < K) {
        v = load_scalar(a[u32(a_base + i32(m) * a_rs + i32(k) * a_cs)], a_sign);
      }
      a_tile[ki * BM + mi] = v;
    }
    for (var l = flat; l < BK * BN; l += THREADS) {
      var ni: u32;
      var ki: u32;
      if (B_K_FAST) { ki = l % BK; ni = l / BK; } else { ni = l % BN; ki = l / BN; }
      let n = n_base + ni;
      let k = k0 + ki;
      var v = Scalar();  // explicit zero: out-of-range elements must contribute nothing
      if (n < N && k < K) {
        v = load_scalar(b[u32(b_base + i32(k) * b_rs + i32(n) * b_cs)], b_sign);
      }
      b_tile[ki * BN + ni] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      for (var i = 0u; i < TM; i++) {
        av[i] = a_tile[kk * BM + lid.x + W * i];
      }
      for (var j = 0u; j < TN; j++) {
        bv[j] = b_tile[kk * BN + lid.y + W * j];
      }
      for (var i = 0u; i < TM; i++) {
        for (var j = 0u; j < TN; j++) {
          acc[i * TN + j] = mac(acc[i * TN + j], av[i], bv[j]);
        }
      }
    }
    workgroupBarrier();
  }

  let out_base = bi * M * N;
  for (var i = 0u; i < TM; i++) {
    let m = m_base + lid.x + W * i;
    for (var j = 0u; j < TN; j++) {
      let n = n_base + lid.y + W * j;
      if (m < M && n < N) {
        c[out_base + n * M + m] = acc[i * TN + j];
      }
    }
  }
}
