// Batched GEMM for einsum's batch-first layout with a batch of at least a warp (numpy's
// batch-first labels on column-major tensors keep the batch fastest in memory):
//   c[bi + B*m + B*M*n] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (likewise B), the batch strides 1 or
// 0 (planning/dot_general_plan.py binds them so).
//
// One invocation per batch entry and TM x TN block of outputs, in registers: the 32 lanes of a
// row of the workgroup (x) are 32 consecutive entries, so each of their loads and stores moves
// one 128-byte line (or, for a broadcast operand, one word); per k an invocation loads TM
// scalars of A and TN of B (the next k's while this one's TM*TN multiply-adds run). The rows of
// the workgroup (y, WM rows of positions by WY / WM columns) tile WM*TM rows and (WY / WM)*TN
// columns of the output. No workgroup memory and no barriers: the operands that neighbouring
// rows share come from the cache. Out-of-range entries, rows and columns load clamped and are
// not stored.
// params: gemm_common.wgsl's layout (tiles_m, tiles_n: the output's tiles; k_total and k_step
// unused).

#include "scalar_{{SCALAR}}.wgsl"

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<Scalar>;
@group(0) @binding(2) var<storage, read> b: array<Scalar>;
@group(0) @binding(3) var<storage, read_write> c: array<Scalar>;

#include "grid.wgsl"

const WM: u32 = {{WM}}u;
const WN: u32 = {{WY}}u / {{WM}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;

@compute @workgroup_size(32, {{WY}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let M = params[0];
  let N = params[1];
  let K = params[2];
  let B = params[3];
  let tiles_m = params[4];
  let tiles_n = params[5];
  let tiles_b = (B + 31u) / 32u;
  let group = workgroup_index(wid, nwg);
  if (group >= tiles_b * tiles_m * tiles_n) {
    return;  // a padding workgroup of a grid spread over two dimensions
  }
  // The batch fastest, then the column tile: neighbouring workgroups share their rows of A.
  let bi = (group % tiles_b) * 32u + lid.x;
  let n0 = (((group / tiles_b) % tiles_n) * WN + lid.y / WM) * TN;
  let m0 = ((group / (tiles_b * tiles_n)) * WM + lid.y % WM) * TM;
  let e = i32(min(bi, B - 1u));
  let a_rs = bitcast<i32>(params[7]);
  let a_cs = bitcast<i32>(params[8]);
  let b_rs = bitcast<i32>(params[11]);
  let b_cs = bitcast<i32>(params[12]);
  let a_sign = bitcast<f32>(params[14]);
  let b_sign = bitcast<f32>(params[15]);
  var a_at: array<i32, TM>;
  // unroll
  for (var i = 0u; i < {{TM}}u; i++) {
    a_at[i] = bitcast<i32>(params[6]) + e * bitcast<i32>(params[9])
        + i32(min(m0 + i, M - 1u)) * a_rs;
  }
  var b_at: array<i32, TN>;
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    b_at[j] = bitcast<i32>(params[10]) + e * bitcast<i32>(params[13])
        + i32(min(n0 + j, N - 1u)) * b_cs;
  }

  var acc: array<Scalar, TM * TN>;
  var av: array<Scalar, TM>;
  var bv: array<Scalar, TN>;
  // unroll
  for (var i = 0u; i < {{TM}}u; i++) {
    av[i] = load_scalar(a[u32(a_at[i])], a_sign);
  }
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    bv[j] = load_scalar(b[u32(b_at[j])], b_sign);
  }
  for (var k = 1u; k <= K; k++) {
    // The next k's operands (the last step reloads k - 1's: in range, unused).
    let kn = min(k, K - 1u);
    var an: array<Scalar, TM>;
    var bn: array<Scalar, TN>;
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      an[i] = load_scalar(a[u32(a_at[i] + i32(kn) * a_cs)], a_sign);
    }
    // unroll
    for (var j = 0u; j < {{TN}}u; j++) {
      bn[j] = load_scalar(b[u32(b_at[j] + i32(kn) * b_rs)], b_sign);
    }
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      // unroll
      for (var j = 0u; j < {{TN}}u; j++) {
        acc[i * TN + j] = mac(acc[i * TN + j], av[i], bv[j]);
      }
    }
    av = an;
    bv = bn;
  }

  if (bi >= B) {
    return;
  }
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      if (m0 + i < M && n0 + j < N) {
        c[bi + B * (m0 + i + M * (n0 + j))] = acc[i * TN + j];
      }
    }
  }
}
