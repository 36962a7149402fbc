// Batched GEMM for einsum's batch-first layout (numpy's batch-first labels on column-major
// tensors keep the batch fastest in memory), for GPUs, with the batch as the vector axis:
//   c[bi + B*m + B*M*n] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides; likewise B); the
// operands' batch stride is 1 or 0 (planning/dot_general_plan.py binds them so).
//
// Every value an invocation loads, keeps and stores is a 16-byte vector of LANES consecutive
// batch entries (4 f32 or 2 C32), so a step of K is TM x TN vector multiply-adds that share
// nothing across lanes. A workgroup of EG x MG x NG invocations covers EG vectors of batch
// entries, BM = MG*TM rows and BN = NG*TN columns: invocation (e, mg, ng) owns rows
// mg + MG*i and columns ng + NG*j of batch vector e. A warp of 32 is EG x WM x WN of them
// (WM values of mg by WN of ng), so that a step of the product reads EG*WM distinct vectors of
// A and EG*WN of B per warp, each set consecutive in workgroup memory (one 128-byte wavefront
// with EG*WM = 8), the rest broadcasts. BK-deep tiles of A and B live in workgroup memory in
// the memory's own order, [k][row or column][batch vector]: the loads of a warp are runs of EG
// vectors, one per row (whole 32-byte sectors with EG = 2), and land in consecutive slots. The next tile's global loads are in flight while this one is multiplied. The
// results go out straight from the registers, batch entry fastest, as the operands came in.
// With VEC_A (VEC_B, VEC_C) a vector is one 16-byte load (store): the batch stride is 1 and
// every vector starts 16-byte aligned (offset, strides and B multiples of LANES); otherwise it
// is LANES scalar loads (a broadcast or a batch that is not a multiple of LANES). Out-of-range
// elements load as zero and are never stored; lanes past B compute values nobody stores. Every
// loop with a constant trip count is unrolled at render time.
// params: gemm_common.wgsl's layout (tiles_m, tiles_n: the output's tiles; k_total and k_step
// unused).

#include "scalar_{{SCALAR}}.wgsl"

@group(0) @binding(0) var<storage, read> params: array<u32>;
#if VEC_A
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
#else
@group(0) @binding(1) var<storage, read> a: array<Scalar>;
#endif
#if VEC_B
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
#else
@group(0) @binding(2) var<storage, read> b: array<Scalar>;
#endif
#if VEC_C
@group(0) @binding(3) var<storage, read_write> c: array<vec4<f32>>;
#else
@group(0) @binding(3) var<storage, read_write> c: array<Scalar>;
#endif

#include "grid.wgsl"

const EG: u32 = {{EG}}u;
const WM: u32 = {{WM}}u;
const WN: u32 = 32u / (EG * WM);
const MG: u32 = {{MG}}u;
const NG: u32 = {{NG}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const BK: u32 = {{BK}}u;
const BM: u32 = MG * TM;
const BN: u32 = NG * TN;
const THREADS: u32 = EG * MG * NG;
// Batch entries per workgroup; vectors per tile of A.
const EB: u32 = EG * {{LANES}}u;
const A_TILE: u32 = BK * BM * EG;

var<workgroup> tiles: array<vec4<f32>, {{SHARED}}>;

// The LANES batch entries from bi0 at element `at` (bi0's address, without k); zeros past B.
fn load_a(at: i32, bi0: u32, bs: i32, batch: u32, sign: f32) -> vec4<f32> {
#if VEC_A
  return load_lanes(a[u32(at) / {{LANES}}u], sign);
#else
  var v = vec4<f32>();
  // unroll
  for (var s = 0u; s < {{LANES}}u; s++) {
    if (bi0 + s < batch) {
      v = with_lane(v, s, load_scalar(a[u32(at + i32(s) * bs)], sign));
    }
  }
  return v;
#endif
}

fn load_b(at: i32, bi0: u32, bs: i32, batch: u32, sign: f32) -> vec4<f32> {
#if VEC_B
  return load_lanes(b[u32(at) / {{LANES}}u], sign);
#else
  var v = vec4<f32>();
  // unroll
  for (var s = 0u; s < {{LANES}}u; s++) {
    if (bi0 + s < batch) {
      v = with_lane(v, s, load_scalar(b[u32(at + i32(s) * bs)], sign));
    }
  }
  return v;
#endif
}

// Stores the lanes of `v` below B at element `at` (bi0's address).
fn store_c(at: u32, bi0: u32, batch: u32, v: vec4<f32>) {
#if VEC_C
  c[at / {{LANES}}u] = v;
#else
  // unroll
  for (var s = 0u; s < {{LANES}}u; s++) {
    if (bi0 + s < batch) {
      c[at + s] = lane_of(v, s);
    }
  }
#endif
}

@compute @workgroup_size({{THREADS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) flat: u32) {
  let M = params[0];
  let N = params[1];
  let K = params[2];
  let B = params[3];
  let tiles_m = params[4];
  let tiles_n = params[5];
  let tiles_b = (B + EB - 1u) / EB;
  let group = workgroup_index(wid, nwg);
  if (group >= tiles_b * tiles_m * tiles_n) {
    return;  // a padding workgroup of a grid spread over two dimensions: no barrier ahead
  }
  // The column tile fastest: neighbouring workgroups share their tile of A.
  let n_base = (group % tiles_n) * BN;
  let b_base = ((group / tiles_n) % tiles_b) * EB;
  let m_base = (group / (tiles_n * tiles_b)) * BM;
  let a_rs = bitcast<i32>(params[7]);
  let a_cs = bitcast<i32>(params[8]);
  let a_bs = bitcast<i32>(params[9]);
  let b_rs = bitcast<i32>(params[11]);
  let b_cs = bitcast<i32>(params[12]);
  let b_bs = bitcast<i32>(params[13]);
  let a_sign = bitcast<f32>(params[14]);
  let b_sign = bitcast<f32>(params[15]);

  // Tile loads: vector l = flat + r*THREADS is (batch vector l % EG, row or column
  // (l / EG) % BM or BN, k l / (EG*BM or BN)), and its slot in the tile is l itself. Its first
  // entry, its address without k, whether it is in range, its k.
  var a_bi: array<u32, {{LOADS_A}}>;
  var a_at: array<i32, {{LOADS_A}}>;
  var a_in: array<bool, {{LOADS_A}}>;
  var a_k: array<u32, {{LOADS_A}}>;
  var a_next: array<vec4<f32>, {{LOADS_A}}>;
  // unroll
  for (var r = 0u; r < {{LOADS_A}}u; r++) {
    let l = flat + r * THREADS;
    let m = m_base + (l / EG) % BM;
    a_bi[r] = b_base + (l % EG) * {{LANES}}u;
    a_k[r] = l / (EG * BM);
    a_in[r] = a_bi[r] < B && m < M;
    a_at[r] = bitcast<i32>(params[6]) + i32(min(a_bi[r], B - 1u)) * a_bs
        + i32(min(m, M - 1u)) * a_rs;
  }
  var b_bi: array<u32, {{LOADS_B}}>;
  var b_at: array<i32, {{LOADS_B}}>;
  var b_in: array<bool, {{LOADS_B}}>;
  var b_k: array<u32, {{LOADS_B}}>;
  var b_next: array<vec4<f32>, {{LOADS_B}}>;
  // unroll
  for (var r = 0u; r < {{LOADS_B}}u; r++) {
    let l = flat + r * THREADS;
    let n = n_base + (l / EG) % BN;
    b_bi[r] = b_base + (l % EG) * {{LANES}}u;
    b_k[r] = l / (EG * BN);
    b_in[r] = b_bi[r] < B && n < N;
    b_at[r] = bitcast<i32>(params[10]) + i32(min(b_bi[r], B - 1u)) * b_bs
        + i32(min(n, N - 1u)) * b_cs;
  }

  let tiles_k = (K + BK - 1u) / BK;
  // unroll
  for (var r = 0u; r < {{LOADS_A}}u; r++) {
    a_next[r] = vec4<f32>();
    if (a_in[r] && a_k[r] < K) {
      a_next[r] = load_a(a_at[r] + i32(a_k[r]) * a_cs, a_bi[r], a_bs, B, a_sign);
    }
    tiles[flat + r * THREADS] = a_next[r];
  }
  // unroll
  for (var r = 0u; r < {{LOADS_B}}u; r++) {
    b_next[r] = vec4<f32>();
    if (b_in[r] && b_k[r] < K) {
      b_next[r] = load_b(b_at[r] + i32(b_k[r]) * b_rs, b_bi[r], b_bs, B, b_sign);
    }
    tiles[A_TILE + flat + r * THREADS] = b_next[r];
  }
  workgroupBarrier();

  // This invocation's place in its warp (e, then WM values of mg, then WN of ng), and its
  // warp's block of WM x WN among the MG x NG.
  let e = flat % EG;
  let in_warp = flat / EG;
  let warp = flat / 32u;
  let mg = in_warp % WM + WM * (warp % (MG / WM));
  let ng = (in_warp / WM) % WN + WN * (warp / (MG / WM));
  var acc: array<vec4<f32>, TM * TN>;
  // unroll
  for (var i = 0u; i < {{TM}}u * {{TN}}u; i++) {
    acc[i] = vec4<f32>();
  }
  var av: array<vec4<f32>, TM>;
  var bv: array<vec4<f32>, TN>;
  for (var t = 0u; t < tiles_k; t++) {
    let more = t + 1u < tiles_k;
    if (more) {
      let k0 = (t + 1u) * BK;
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
        a_next[r] = vec4<f32>();
        if (a_in[r] && k0 + a_k[r] < K) {
          a_next[r] = load_a(a_at[r] + i32(k0 + a_k[r]) * a_cs, a_bi[r], a_bs, B, a_sign);
        }
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        b_next[r] = vec4<f32>();
        if (b_in[r] && k0 + b_k[r] < K) {
          b_next[r] = load_b(b_at[r] + i32(k0 + b_k[r]) * b_rs, b_bi[r], b_bs, B, b_sign);
        }
      }
    }
    // unroll
    for (var kk = 0u; kk < {{BK}}u; kk++) {
      // unroll
      for (var i = 0u; i < {{TM}}u; i++) {
        av[i] = tiles[(kk * BM + mg + MG * i) * EG + e];
      }
      // unroll
      for (var j = 0u; j < {{TN}}u; j++) {
        bv[j] = tiles[A_TILE + (kk * BN + ng + NG * j) * EG + e];
      }
      // unroll
      for (var i = 0u; i < {{TM}}u; i++) {
        // unroll
        for (var j = 0u; j < {{TN}}u; j++) {
          acc[i * TN + j] = mac_lanes(acc[i * TN + j], av[i], bv[j]);
        }
      }
    }
    workgroupBarrier();  // every read of this tile is done before it is overwritten
    if (more) {
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
        tiles[flat + r * THREADS] = a_next[r];
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        tiles[A_TILE + flat + r * THREADS] = b_next[r];
      }
    }
    workgroupBarrier();
  }

  let bi0 = b_base + e * {{LANES}}u;
  if (bi0 >= B) {
    return;
  }
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    let n = n_base + ng + NG * j;
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      let m = m_base + mg + MG * i;
      if (m < M && n < N) {
        store_c(bi0 + B * (m + M * n), bi0, B, acc[i * TN + j]);
      }
    }
  }
}
