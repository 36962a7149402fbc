// Batched GEMM with a TM x TN register block per invocation and no workgroup memory, for CPU
// adapters (SwiftShader, lavapipe), where barriers cost more than they save:
//   c[m + M*n + M*N*bi] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides; likewise B), so
// transposed, permuted or offset operands are read in place. An invocation owns the TM
// consecutive rows from m0 and TN consecutive columns from n0. Its loops are unrolled at render
// time, so the blocks stay in registers. Rows and columns past the edge are clamped for loads
// and skipped on store.
// params: [M, N, K, batch, tiles_m, tiles_n, a_off, a_rs, a_cs, a_bs, b_off, b_rs, b_cs, b_bs,
//          a_conj_sign (f32 bits), b_conj_sign (f32 bits), k_total, k_step]
// Split-K runs chunks of K as the batch: chunk bi covers k_step*bi + [0, K), cut at k_total
// (k_step = 0 and k_total = K for an ordinary batch).

#include "scalar_{{SCALAR}}.wgsl"

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<Scalar>;
@group(0) @binding(2) var<storage, read> b: array<Scalar>;
@group(0) @binding(3) var<storage, read_write> c: array<Scalar>;

@compute @workgroup_size({{WX}}, {{WY}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
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
  let m0 = ((t % tiles_m) * {{WX}}u + lid.x) * {{TM}}u;
  let n0 = ((t / tiles_m) * {{WY}}u + lid.y) * {{TN}}u;
  if (m0 >= M || n0 >= N) {
    return;
  }
  let a_cs = bitcast<i32>(params[8]);
  let b_rs = bitcast<i32>(params[11]);
  let a_sign = bitcast<f32>(params[14]);
  let b_sign = bitcast<f32>(params[15]);
  let a_base = bitcast<i32>(params[6]) + i32(bi) * bitcast<i32>(params[9]);
  let b_base = bitcast<i32>(params[10]) + i32(bi) * bitcast<i32>(params[13]);
  let k_end = min(K, params[16] - bi * params[17]);

  var a_row: array<i32, {{TM}}>;
  var b_col: array<i32, {{TN}}>;
  // unroll
  for (var i = 0u; i < {{TM}}u; i++) {
    a_row[i] = a_base + i32(min(m0 + i, M - 1u)) * bitcast<i32>(params[7]);
  }
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    b_col[j] = b_base + i32(min(n0 + j, N - 1u)) * bitcast<i32>(params[12]);
  }

  var acc: array<Scalar, {{TM}} * {{TN}}>;
  var av: array<Scalar, {{TM}}>;
  for (var k = 0u; k < k_end; k++) {
    let ka = i32(k) * a_cs;
    let kb = i32(k) * b_rs;
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      av[i] = load_scalar(a[u32(a_row[i] + ka)], a_sign);
    }
    // unroll
    for (var j = 0u; j < {{TN}}u; j++) {
      let bv = load_scalar(b[u32(b_col[j] + kb)], b_sign);
      // unroll
      for (var i = 0u; i < {{TM}}u; i++) {
        acc[j * {{TM}}u + i] = mac(acc[j * {{TM}}u + i], av[i], bv);
      }
    }
  }

  let out_base = bi * M * N;
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      if (m0 + i < M && n0 + j < N) {
        c[out_base + (n0 + j) * M + m0 + i] = acc[j * {{TM}}u + i];
      }
    }
  }
}
