// Batched GEMM for einsum's batch-first layout (numpy's batch-first labels on column-major
// tensors keep the batch fastest in memory), for GPUs:
//   c[bi + B*m + B*M*n] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides; likewise B); the
// operands' batch stride is 1 or 0 (planning/dot_general_plan.py binds them so).
//
// The batch is the vector axis: every value an invocation loads, keeps and stores is a 16-byte
// vector of LANES consecutive batch entries (4 f32 or 2 C32) at one (row, k), (k, column) or
// (row, column), so the product is TM x TN vector multiply-adds per step of K, with no
// shuffling between the memory's order and the registers'. A workgroup of EG x MG x NG
// invocations computes EG*LANES consecutive batch entries of a BM x BN tile (BM = MG*TM,
// BN = NG*TN): invocation (eg, mg, ng) owns batch vector eg, rows mg + MG*i and columns
// ng + NG*j. BK-deep tiles live in workgroup memory as [k][row or column][batch vector], the
// memory's order, so a tile load is one 16-byte load and one vector store per group, and a warp
// (eg and mg fastest) reads consecutive vectors of A and a broadcast of B. A warp's store covers
// EG*LANES consecutive batch entries of MG consecutive rows: whole 32-byte sectors for f32
// (EG = 2). The next tile's global loads are in flight while this one is multiplied.
// With VEC_A (VEC_B) the operand's batch vectors are aligned 16-byte words (batch stride 1,
// offset and strides multiples of LANES); otherwise, and for a vector past the batch's end, the
// entries load one at a time. With VEC_C (B a multiple of LANES) the results go out as 16-byte
// stores. Out-of-range elements load as zero; every loop with a constant trip count is unrolled
// at render time.
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
const MG: u32 = {{MG}}u;
const NG: u32 = {{NG}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const BK: u32 = {{BK}}u;
const BM: u32 = MG * TM;
const BN: u32 = NG * TN;
const NB: u32 = EG * LANES;
const THREADS: u32 = EG * MG * NG;
const A_TILE: u32 = BK * BM * EG;
const B_TILE: u32 = BK * BN * EG;

var<workgroup> a_tile: array<vec4<f32>, A_TILE>;
var<workgroup> b_tile: array<vec4<f32>, B_TILE>;

// Where one load group of a tile reads: the element index of its first batch entry at k = 0,
// and how many of its LANES entries exist (0 past the batch's end or the tile's edge).
struct Group {
  at: i32,
  entries: u32,
}

fn a_value(at: u32) -> Scalar {
#if VEC_A
  return lane_of(a[at / LANES], at % LANES);
#else
  return a[at];
#endif
}

fn b_value(at: u32) -> Scalar {
#if VEC_B
  return lane_of(b[at / LANES], at % LANES);
#else
  return b[at];
#endif
}

// The LANES batch entries of A at (row, k) from `g`; zeros past K and the edges.
fn load_a(g: Group, k: u32, k_len: u32, step: i32, bs: i32, sign: f32) -> vec4<f32> {
  var v = vec4<f32>();  // explicit zero: out-of-range entries must contribute nothing
  if (k >= k_len) {
    return v;
  }
  let at = g.at + i32(k) * step;
#if VEC_A
  if (g.entries == LANES) {
    return load_lanes(a[u32(at) / LANES], sign);
  }
#endif
  // unroll
  for (var e = 0u; e < {{LANES}}u; e++) {
    if (e < g.entries) {
      v = with_lane(v, e, load_scalar(a_value(u32(at + i32(e) * bs)), sign));
    }
  }
  return v;
}

fn load_b(g: Group, k: u32, k_len: u32, step: i32, bs: i32, sign: f32) -> vec4<f32> {
  var v = vec4<f32>();
  if (k >= k_len) {
    return v;
  }
  let at = g.at + i32(k) * step;
#if VEC_B
  if (g.entries == LANES) {
    return load_lanes(b[u32(at) / LANES], sign);
  }
#endif
  // unroll
  for (var e = 0u; e < {{LANES}}u; e++) {
    if (e < g.entries) {
      v = with_lane(v, e, load_scalar(b_value(u32(at + i32(e) * bs)), sign));
    }
  }
  return v;
}

// local_invocation_index is eg + EG*(mg + MG*ng).
@compute @workgroup_size({{EG}}, {{MG}}, {{NG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) flat: u32) {
  let M = params[0];
  let N = params[1];
  let K = params[2];
  let B = params[3];
  let tiles_m = params[4];
  let tiles_n = params[5];
  let tiles_b = (B + NB - 1u) / NB;
  let group = workgroup_index(wid, nwg);
  if (group >= tiles_b * tiles_m * tiles_n) {
    return;  // a padding workgroup of a grid spread over two dimensions: no barrier ahead
  }
  // The column tile fastest: neighbouring workgroups share their tile of A.
  let n_base = (group % tiles_n) * BN;
  let b_base = ((group / tiles_n) % tiles_b) * NB;
  let m_base = (group / (tiles_n * tiles_b)) * BM;
  let a_rs = bitcast<i32>(params[7]);
  let a_cs = bitcast<i32>(params[8]);
  let a_bs = bitcast<i32>(params[9]);
  let b_rs = bitcast<i32>(params[11]);
  let b_cs = bitcast<i32>(params[12]);
  let b_bs = bitcast<i32>(params[13]);
  let a_sign = bitcast<f32>(params[14]);
  let b_sign = bitcast<f32>(params[15]);

  // Tile load l = flat + r*THREADS is (batch vector l % EG, row or column (l / EG) % BM or BN,
  // k l / (EG*BM or BN)): its workgroup-memory slot is l itself.
  var a_groups: array<Group, {{LOADS_A}}>;
  var a_k: array<u32, {{LOADS_A}}>;
  var a_next: array<vec4<f32>, {{LOADS_A}}>;
  // unroll
  for (var r = 0u; r < {{LOADS_A}}u; r++) {
    let l = flat + r * THREADS;
    let first = b_base + (l % EG) * LANES;
    let m = m_base + (l / EG) % BM;
    a_k[r] = l / (EG * BM);
    a_groups[r].entries = select(0u, min(LANES, B - min(first, B)), m < M);
    a_groups[r].at = bitcast<i32>(params[6]) + i32(min(first, B - 1u)) * a_bs
        + i32(min(m, M - 1u)) * a_rs;
    a_next[r] = load_a(a_groups[r], a_k[r], K, a_cs, a_bs, a_sign);
    a_tile[l] = a_next[r];
  }
  var b_groups: array<Group, {{LOADS_B}}>;
  var b_k: array<u32, {{LOADS_B}}>;
  var b_next: array<vec4<f32>, {{LOADS_B}}>;
  // unroll
  for (var r = 0u; r < {{LOADS_B}}u; r++) {
    let l = flat + r * THREADS;
    let first = b_base + (l % EG) * LANES;
    let n = n_base + (l / EG) % BN;
    b_k[r] = l / (EG * BN);
    b_groups[r].entries = select(0u, min(LANES, B - min(first, B)), n < N);
    b_groups[r].at = bitcast<i32>(params[10]) + i32(min(first, B - 1u)) * b_bs
        + i32(min(n, N - 1u)) * b_cs;
    b_next[r] = load_b(b_groups[r], b_k[r], K, b_rs, b_bs, b_sign);
    b_tile[l] = b_next[r];
  }
  workgroupBarrier();

  let eg = flat % EG;
  let mg = (flat / EG) % MG;
  let ng = flat / (EG * MG);
  var acc: array<vec4<f32>, TM * TN>;
  // unroll
  for (var i = 0u; i < {{TM}}u * {{TN}}u; i++) {
    acc[i] = vec4<f32>();
  }
  var av: array<vec4<f32>, TM>;
  var bv: array<vec4<f32>, TN>;
  let tiles_k = (K + BK - 1u) / BK;
  for (var t = 0u; t < tiles_k; t++) {
    let more = t + 1u < tiles_k;
    if (more) {
      let k0 = (t + 1u) * BK;
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
        a_next[r] = load_a(a_groups[r], k0 + a_k[r], K, a_cs, a_bs, a_sign);
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        b_next[r] = load_b(b_groups[r], k0 + b_k[r], K, b_rs, b_bs, b_sign);
      }
    }
    // unroll
    for (var kk = 0u; kk < {{BK}}u; kk++) {
      // unroll
      for (var i = 0u; i < {{TM}}u; i++) {
        av[i] = a_tile[(kk * BM + mg + MG * i) * EG + eg];
      }
      // unroll
      for (var j = 0u; j < {{TN}}u; j++) {
        bv[j] = b_tile[(kk * BN + ng + NG * j) * EG + eg];
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
        a_tile[flat + r * THREADS] = a_next[r];
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        b_tile[flat + r * THREADS] = b_next[r];
      }
    }
    workgroupBarrier();
  }

  let first = b_base + eg * LANES;
  let entries = min(LANES, B - min(first, B));
  // unroll
  for (var i = 0u; i < {{TM}}u; i++) {
    let m = m_base + mg + MG * i;
    // unroll
    for (var j = 0u; j < {{TN}}u; j++) {
      let n = n_base + ng + NG * j;
      if (m < M && n < N) {
        let at = first + B * (m + M * n);
#if VEC_C
        if (entries == LANES) {
          c[at / LANES] = acc[i * TN + j];
        }
#else
        // unroll
        for (var e = 0u; e < {{LANES}}u; e++) {
          if (e < entries) {
            c[at + e] = lane_of(acc[i * TN + j], e);
          }
        }
#endif
      }
    }
  }
}
