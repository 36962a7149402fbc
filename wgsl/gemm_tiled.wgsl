// Batched GEMM for GPUs: BM x BK and BK x BN tiles staged through workgroup memory, a TM x TN
// register block per invocation (a 16 x 16 workgroup, so BM = 16*TM, BN = 16*TN).
//   c[m + M*n + M*N*bi] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides; likewise B), so
// transposed and offset operands are read in place. Tile loads make neighbouring invocations
// read neighbouring addresses: along m or k for A (A_K_FAST), along k or n for B (B_K_FAST),
// whichever the operand keeps contiguous. Out-of-range elements load as zero. Every loop with a
// constant trip count is unrolled at render time (LOADS_A = BK*BM/256, LOADS_B = BK*BN/256), so
// the blocks are indexed with constants and stay in registers.
// (params: see gemm_common.wgsl)

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
@group(0) @binding(3) var<storage, read_write> c: array<Scalar>;

#include "gemm_common.wgsl"

const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const BK: u32 = {{BK}}u;
const A_K_FAST: bool = {{A_K_FAST}};
const B_K_FAST: bool = {{B_K_FAST}};
// F32 operands whose contiguous axis is 16-byte aligned load 4 elements at a time (VEC_A,
// VEC_B); each of an invocation's LOADS_A global loads brings VA elements of A.
const VEC_A: bool = {{VEC_A}};
const VEC_B: bool = {{VEC_B}};
const VA: u32 = select(1u, 4u, VEC_A);
const VB: u32 = select(1u, 4u, VEC_B);
const W: u32 = 16u;
const BM: u32 = W * TM;
const BN: u32 = W * TN;
const THREADS: u32 = W * W;

// Tiles keep the operand's contiguous axis fastest, so the stores below are conflict-free and
// the reads are either consecutive across lanes or one broadcast.
var<workgroup> a_tile: array<Scalar, BK * BM>;
var<workgroup> b_tile: array<Scalar, BK * BN>;

fn a_at(k: u32, m: u32) -> u32 {
  if (A_K_FAST) { return m * BK + k; }
  return k * BM + m;
}

fn b_at(k: u32, n: u32) -> u32 {
  if (B_K_FAST) { return n * BK + k; }
  return k * BN + n;
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) flat: u32) {
  let job = gemm_job(wid, nwg);
  if (!job.valid) {
    return;
  }
  let M = job.m;
  let N = job.n;
  let K = job.k;
  let m_base = job.tile_m * BM;
  let n_base = job.tile_n * BN;

  // The first tile element of each of this invocation's loads: neighbouring invocations take
  // neighbouring addresses along the operand's contiguous axis.
  var a_k: array<u32, {{LOADS_A}}>;
  var a_m: array<u32, {{LOADS_A}}>;
  var b_k: array<u32, {{LOADS_B}}>;
  var b_n: array<u32, {{LOADS_B}}>;
  // unroll
  for (var r = 0u; r < {{LOADS_A}}u; r++) {
    let l = flat + r * THREADS;
    if (A_K_FAST) {
      a_k[r] = (l % (BK / VA)) * VA;
      a_m[r] = l / (BK / VA);
    } else {
      a_m[r] = (l % (BM / VA)) * VA;
      a_k[r] = l / (BM / VA);
    }
  }
  // unroll
  for (var r = 0u; r < {{LOADS_B}}u; r++) {
    let l = flat + r * THREADS;
    if (B_K_FAST) {
      b_k[r] = (l % (BK / VB)) * VB;
      b_n[r] = l / (BK / VB);
    } else {
      b_n[r] = (l % (BN / VB)) * VB;
      b_k[r] = l / (BN / VB);
    }
  }

  var acc: array<Scalar, TM * TN>;
  var av: array<Scalar, TM>;
  var bv: array<Scalar, TN>;
#if VEC_A
  var a_next: array<vec4<f32>, {{LOADS_A}}>;
#else
  var a_next: array<Scalar, {{LOADS_A}}>;
#endif
#if VEC_B
  var b_next: array<vec4<f32>, {{LOADS_B}}>;
#else
  var b_next: array<Scalar, {{LOADS_B}}>;
#endif
  // Software pipelining: the global loads of tile k0 are in flight while tile k0 - BK is
  // multiplied out of workgroup memory. The first pass only loads, the last only computes.
  for (var k0 = 0u; k0 < K + BK; k0 += BK) {
    if (k0 > 0u) {
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
#if VEC_A
        // unroll
        for (var e = 0u; e < 4u; e++) {
          a_tile[a_at(a_k[r] + select(0u, e, A_K_FAST), a_m[r] + select(e, 0u, A_K_FAST))] =
              a_next[r][e];
        }
#else
        a_tile[a_at(a_k[r], a_m[r])] = a_next[r];
#endif
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
#if VEC_B
        // unroll
        for (var e = 0u; e < 4u; e++) {
          b_tile[b_at(b_k[r] + select(0u, e, B_K_FAST), b_n[r] + select(e, 0u, B_K_FAST))] =
              b_next[r][e];
        }
#else
        b_tile[b_at(b_k[r], b_n[r])] = b_next[r];
#endif
      }
    }
    workgroupBarrier();
    if (k0 < K) {
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
        let m = m_base + a_m[r];
        let k = k0 + a_k[r];
        let index = job.a_base + i32(m) * job.a_rs + i32(k) * job.a_cs;
#if VEC_A
        // The whole group in range: one aligned 16-byte load; else element by element.
        let last_m = m + select(3u, 0u, A_K_FAST);
        let last_k = k + select(0u, 3u, A_K_FAST);
        if (last_m < M && last_k < K) {
          a_next[r] = a[u32(index) >> 2u];
        } else {
          a_next[r] = vec4<f32>();
          // unroll
          for (var e = 0u; e < 4u; e++) {
            if (m + select(e, 0u, A_K_FAST) < M && k + select(0u, e, A_K_FAST) < K) {
              let at = u32(index) + e * u32(select(job.a_rs, job.a_cs, A_K_FAST));
              a_next[r][e] = a[at >> 2u][at & 3u];
            }
          }
        }
#else
        a_next[r] = Scalar();  // explicit zero: out-of-range elements must contribute nothing
        if (m < M && k < K) {
          a_next[r] = load_scalar(a[u32(index)], job.a_sign);
        }
#endif
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        let n = n_base + b_n[r];
        let k = k0 + b_k[r];
        let index = job.b_base + i32(k) * job.b_rs + i32(n) * job.b_cs;
#if VEC_B
        let last_n = n + select(3u, 0u, B_K_FAST);
        let last_k = k + select(0u, 3u, B_K_FAST);
        if (last_n < N && last_k < K) {
          b_next[r] = b[u32(index) >> 2u];
        } else {
          b_next[r] = vec4<f32>();
          // unroll
          for (var e = 0u; e < 4u; e++) {
            if (n + select(e, 0u, B_K_FAST) < N && k + select(0u, e, B_K_FAST) < K) {
              let at = u32(index) + e * u32(select(job.b_cs, job.b_rs, B_K_FAST));
              b_next[r][e] = b[at >> 2u][at & 3u];
            }
          }
        }
#else
        b_next[r] = Scalar();
        if (n < N && k < K) {
          b_next[r] = load_scalar(b[u32(index)], job.b_sign);
        }
#endif
      }
    }
    if (k0 > 0u) {
      // unroll
      for (var kk = 0u; kk < {{BK}}u; kk++) {
        // unroll
        for (var i = 0u; i < {{TM}}u; i++) {
          av[i] = a_tile[a_at(kk, lid.x + W * i)];
        }
        // unroll
        for (var j = 0u; j < {{TN}}u; j++) {
          bv[j] = b_tile[b_at(kk, lid.y + W * j)];
        }
        // unroll
        for (var i = 0u; i < {{TM}}u; i++) {
          // unroll
          for (var j = 0u; j < {{TN}}u; j++) {
            acc[i * TN + j] = mac(acc[i * TN + j], av[i], bv[j]);
          }
        }
      }
    }
    workgroupBarrier();
  }

  let out_base = job.bi * M * N;
  // unroll
  for (var i = 0u; i < {{TM}}u; i++) {
    let m = m_base + lid.x + W * i;
    // unroll
    for (var j = 0u; j < {{TN}}u; j++) {
      let n = n_base + lid.y + W * j;
      if (m < M && n < N) {
        c[out_base + n * M + m] = acc[i * TN + j];
      }
    }
  }
}
