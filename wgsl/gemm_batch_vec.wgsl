// Batched f32 GEMM for einsum's batch-first layout where the batch runs in whole 16-byte
// vectors through both operands and the output (numpy's batch-first labels on column-major
// tensors keep the batch fastest in memory):
//   c[bi + B*m + B*M*n] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi] (likewise B). B, the offsets and the row
// and column strides are multiples of 4 and the batch stride is 1 (DotGeneralPlan.batch_vectors),
// so the 4 entries from any multiple of 4 are one aligned vector in every operand.
//
// An invocation owns one vector of 4 batch entries over TM x TN outputs, in registers: per k it
// loads TM vectors of A and TN of B and does TM*TN vector multiply-adds. BV invocations side by
// side (x) cover 4*BV consecutive entries, so every load and store of a warp moves runs of
// 16*BV consecutive bytes; WY of them (y, WM rows of positions by WY / WM columns) tile
// WM*TM rows and (WY / WM)*TN columns. No workgroup memory and no barriers: the operands that
// neighbours share come from the cache. Out-of-range entries, rows and columns load clamped
// and are not stored.
// params: gemm_common.wgsl's layout (tiles_m, tiles_n: the output's tiles; the sign words,
// k_total and k_step unused).

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> c: array<vec4<f32>>;

#include "grid.wgsl"

const BV: u32 = {{BV}}u;
const WM: u32 = {{WM}}u;
const WN: u32 = {{WY}}u / {{WM}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;

@compute @workgroup_size({{BV}}, {{WY}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let M = params[0];
  let N = params[1];
  let K = params[2];
  let vectors = params[3] / 4u;
  let tiles_m = params[4];
  let tiles_n = params[5];
  let tiles_b = (vectors + BV - 1u) / BV;
  let group = workgroup_index(wid, nwg);
  if (group >= tiles_b * tiles_m * tiles_n) {
    return;  // a padding workgroup of a grid spread over two dimensions
  }
  // The batch fastest, then the column tile: neighbouring workgroups share their rows of A.
  let v = (group % tiles_b) * BV + lid.x;
  let n0 = (((group / tiles_b) % tiles_n) * WN + lid.y / WM) * TN;
  let m0 = ((group / (tiles_b * tiles_n)) * WM + lid.y % WM) * TM;
  let vc = i32(min(v, vectors - 1u));
  // Offsets and strides in vectors (exact: multiples of 4, signed).
  let a_rs = bitcast<i32>(params[7]) / 4;
  let a_cs = bitcast<i32>(params[8]) / 4;
  let b_rs = bitcast<i32>(params[11]) / 4;
  let b_cs = bitcast<i32>(params[12]) / 4;
  var a_at: array<i32, TM>;
  // unroll
  for (var i = 0u; i < {{TM}}u; i++) {
    a_at[i] = bitcast<i32>(params[6]) / 4 + vc + i32(min(m0 + i, M - 1u)) * a_rs;
  }
  var b_at: array<i32, TN>;
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    b_at[j] = bitcast<i32>(params[10]) / 4 + vc + i32(min(n0 + j, N - 1u)) * b_cs;
  }

  var acc: array<vec4<f32>, TM * TN>;
  var av: array<vec4<f32>, TM>;
  var bv: array<vec4<f32>, TN>;
  for (var k = 0u; k < K; k++) {
    let ka = i32(k) * a_cs;
    let kb = i32(k) * b_rs;
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      av[i] = a[u32(a_at[i] + ka)];
    }
    // unroll
    for (var j = 0u; j < {{TN}}u; j++) {
      bv[j] = b[u32(b_at[j] + kb)];
    }
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      // unroll
      for (var j = 0u; j < {{TN}}u; j++) {
        acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]);
      }
    }
  }

  if (v >= vectors) {
    return;
  }
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      if (m0 + i < M && n0 + j < N) {
        c[v + vectors * (m0 + i + M * (n0 + j))] = acc[i * TN + j];
      }
    }
  }
}
