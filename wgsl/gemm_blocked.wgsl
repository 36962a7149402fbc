// Batched GEMM with a TM x TN register block per invocation and no workgroup memory, for CPU
// adapters (SwiftShader, lavapipe), where barriers cost more than they save:
//   c[m + M*n + M*N*bi] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides; likewise B), so
// transposed, permuted or offset operands are read in place. An invocation owns the TM
// consecutive rows from m0 and TN consecutive columns from n0. Its loops are unrolled at render
// time, so the blocks stay in registers. Rows and columns past the edge are clamped for loads
// and skipped on store.
// (params: see gemm_common.wgsl)

#include "scalar_{{SCALAR}}.wgsl"

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<Scalar>;
@group(0) @binding(2) var<storage, read> b: array<Scalar>;
@group(0) @binding(3) var<storage, read_write> c: array<Scalar>;

#include "gemm_common.wgsl"

@compute @workgroup_size({{WX}}, {{WY}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let job = gemm_job(wid, nwg);
  if (!job.valid) {
    return;
  }
  let M = job.m;
  let N = job.n;
  let m0 = (job.tile_m * {{WX}}u + lid.x) * {{TM}}u;
  let n0 = (job.tile_n * {{WY}}u + lid.y) * {{TN}}u;
  if (m0 >= M || n0 >= N) {
    return;
  }

  var a_row: array<i32, {{TM}}>;
  var b_col: array<i32, {{TN}}>;
  // unroll
  for (var i = 0u; i < {{TM}}u; i++) {
    a_row[i] = job.a_base + i32(min(m0 + i, M - 1u)) * job.a_rs;
  }
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    b_col[j] = job.b_base + i32(min(n0 + j, N - 1u)) * job.b_cs;
  }

  var acc: array<Scalar, {{TM}} * {{TN}}>;
  var av: array<Scalar, {{TM}}>;
  for (var k = 0u; k < job.k; k++) {
    let ka = i32(k) * job.a_cs;
    let kb = i32(k) * job.b_rs;
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      av[i] = load_scalar(a[u32(a_row[i] + ka)], job.a_sign);
    }
    // unroll
    for (var j = 0u; j < {{TN}}u; j++) {
      let bv = load_scalar(b[u32(b_col[j] + kb)], job.b_sign);
      // unroll
      for (var i = 0u; i < {{TM}}u; i++) {
        acc[j * {{TM}}u + i] = mac(acc[j * {{TM}}u + i], av[i], bv);
      }
    }
  }

  let out_base = job.bi * M * N;
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
