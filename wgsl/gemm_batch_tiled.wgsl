// Batched GEMM for einsum's batch-first layout (numpy's batch-first labels on column-major
// tensors keep the batch fastest in memory), for GPUs:
//   c[bi + B*m + B*M*n] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides; likewise B); the
// operands' batch stride is 1 or 0 (planning/dot_general_plan.py binds them so).
//
// A workgroup computes NB consecutive batch entries (one warp of 32 invocations each, lid.y)
// of a BM x BN tile of the output, BM = 8*TM and BN = 4*TN: lane x owns the LANES consecutive
// rows from LANES*(x % 8 + 8*g), g < TM / LANES, and likewise columns from x / 8, as gemm_tiled.
// BK-deep tiles of A and B are loaded batch entry fastest, so a warp's loads fill whole 32-byte
// sectors, and stored in workgroup memory per (k, batch entry) as rows of 16-byte vectors, one
// vector of padding apart so the stores miss each other's banks; each step of the product reads
// an invocation's operands with (TM + TN) / LANES vector loads, shared across the warp. The next
// tile's global loads are in flight while this one is multiplied. The output goes out through
// workgroup memory one column of every invocation at a time, batch entry fastest again, so the
// stores fill sectors too. Out-of-range elements load as zero; every loop with a constant trip
// count is unrolled at render time.
// params: gemm_common.wgsl's layout (tiles_m, tiles_n: the output's tiles; k_total and k_step
// unused).

#include "scalar_{{SCALAR}}.wgsl"

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<Scalar>;
@group(0) @binding(2) var<storage, read> b: array<Scalar>;
@group(0) @binding(3) var<storage, read_write> c: array<Scalar>;

#include "grid.wgsl"

const NB: u32 = {{NB}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const BK: u32 = {{BK}}u;
const BM: u32 = 8u * TM;
const BN: u32 = 4u * TN;
const THREADS: u32 = 32u * NB;
// Vectors per (k, batch entry) row of a tile, with one of padding; per tile.
const A_PITCH: u32 = BM / LANES + 1u;
const B_PITCH: u32 = BN / LANES + 1u;
const A_TILE: u32 = BK * NB * A_PITCH;
// Scalars per column group of the output stage: (BM rows x NB entries, padded) + 1.
const STAGE_PITCH: u32 = BM * (NB + 1u) + 1u;
const WORDS: u32 = 4u / LANES;

// The A and B tiles, and afterwards the output stage.
var<workgroup> shared_tiles: array<vec4<f32>, {{SHARED}}>;

// Scalar `s` of the vectors from `base`, one word store at a time: neighbours write other
// scalars of the same vector.
fn shared_put(base: u32, s: u32, x: Scalar) {
  let v = with_lane(vec4<f32>(), 0u, x);
  // unroll
  for (var w = 0u; w < 4u / {{LANES}}u; w++) {
    shared_tiles[base + s / LANES][(s % LANES) * WORDS + w] = v[w];
  }
}

fn shared_get(base: u32, s: u32) -> Scalar {
  return lane_of(shared_tiles[base + s / LANES], s % LANES);
}

@compute @workgroup_size(32, {{NB}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
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
  let b_rs = bitcast<i32>(params[11]);
  let b_cs = bitcast<i32>(params[12]);
  let a_sign = bitcast<f32>(params[14]);
  let b_sign = bitcast<f32>(params[15]);

  // Tile loads: element l = flat + r*THREADS is (entry l % NB, row or column (l / NB) % BM or
  // BN, k l / (NB*BM or BN)); its address without k, whether it is in range, its k and slot.
  var a_at: array<i32, {{LOADS_A}}>;
  var a_in: array<bool, {{LOADS_A}}>;
  var a_k: array<u32, {{LOADS_A}}>;
  var a_slot: array<u32, {{LOADS_A}}>;
  var a_next: array<Scalar, {{LOADS_A}}>;
  // unroll
  for (var r = 0u; r < {{LOADS_A}}u; r++) {
    let l = flat + r * THREADS;
    let e = l % NB;
    let m = (l / NB) % BM;
    a_k[r] = l / (NB * BM);
    a_slot[r] = (a_k[r] * NB + e) * A_PITCH * LANES + m;
    a_in[r] = b_base + e < B && m_base + m < M;
    a_at[r] = bitcast<i32>(params[6]) + i32(min(b_base + e, B - 1u)) * bitcast<i32>(params[9])
        + i32(min(m_base + m, M - 1u)) * a_rs;
  }
  var b_at: array<i32, {{LOADS_B}}>;
  var b_in: array<bool, {{LOADS_B}}>;
  var b_k: array<u32, {{LOADS_B}}>;
  var b_slot: array<u32, {{LOADS_B}}>;
  var b_next: array<Scalar, {{LOADS_B}}>;
  // unroll
  for (var r = 0u; r < {{LOADS_B}}u; r++) {
    let l = flat + r * THREADS;
    let e = l % NB;
    let n = (l / NB) % BN;
    b_k[r] = l / (NB * BN);
    b_slot[r] = (b_k[r] * NB + e) * B_PITCH * LANES + n;
    b_in[r] = b_base + e < B && n_base + n < N;
    b_at[r] = bitcast<i32>(params[10]) + i32(min(b_base + e, B - 1u)) * bitcast<i32>(params[13])
        + i32(min(n_base + n, N - 1u)) * b_cs;
  }

  let tiles_k = (K + BK - 1u) / BK;
  // unroll
  for (var r = 0u; r < {{LOADS_A}}u; r++) {
    a_next[r] = Scalar();
    if (a_in[r] && a_k[r] < K) {
      a_next[r] = load_scalar(a[u32(a_at[r] + i32(a_k[r]) * a_cs)], a_sign);
    }
    shared_put(0u, a_slot[r], a_next[r]);
  }
  // unroll
  for (var r = 0u; r < {{LOADS_B}}u; r++) {
    b_next[r] = Scalar();
    if (b_in[r] && b_k[r] < K) {
      b_next[r] = load_scalar(b[u32(b_at[r] + i32(b_k[r]) * b_rs)], b_sign);
    }
    shared_put(A_TILE, b_slot[r], b_next[r]);
  }
  workgroupBarrier();

  let e = lid.y;
  let mg = lid.x % 8u;
  let ng = lid.x / 8u;
  var acc: array<Scalar, TM * TN>;
  // unroll
  for (var i = 0u; i < {{TM}}u * {{TN}}u; i++) {
    acc[i] = Scalar();
  }
  var av: array<Scalar, TM>;
  var bv: array<Scalar, TN>;
  for (var t = 0u; t < tiles_k; t++) {
    let more = t + 1u < tiles_k;
    if (more) {
      let k0 = (t + 1u) * BK;
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
        a_next[r] = Scalar();
        if (a_in[r] && k0 + a_k[r] < K) {
          a_next[r] = load_scalar(a[u32(a_at[r] + i32(k0 + a_k[r]) * a_cs)], a_sign);
        }
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        b_next[r] = Scalar();
        if (b_in[r] && k0 + b_k[r] < K) {
          b_next[r] = load_scalar(b[u32(b_at[r] + i32(k0 + b_k[r]) * b_rs)], b_sign);
        }
      }
    }
    // unroll
    for (var kk = 0u; kk < {{BK}}u; kk++) {
      // unroll
      for (var g = 0u; g < {{TM}}u / {{LANES}}u; g++) {
        let v = shared_tiles[(kk * NB + e) * A_PITCH + mg + 8u * g];
        // unroll
        for (var l = 0u; l < {{LANES}}u; l++) {
          av[g * LANES + l] = lane_of(v, l);
        }
      }
      // unroll
      for (var g = 0u; g < {{TN}}u / {{LANES}}u; g++) {
        let v = shared_tiles[A_TILE + (kk * NB + e) * B_PITCH + ng + 4u * g];
        // unroll
        for (var l = 0u; l < {{LANES}}u; l++) {
          bv[g * LANES + l] = lane_of(v, l);
        }
      }
      // unroll
      for (var i = 0u; i < {{TM}}u; i++) {
        // unroll
        for (var j = 0u; j < {{TN}}u; j++) {
          acc[i * TN + j] = mac(acc[i * TN + j], av[i], bv[j]);
        }
      }
    }
    workgroupBarrier();  // every read of this tile is done before it is overwritten
    if (more) {
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
        shared_put(0u, a_slot[r], a_next[r]);
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        shared_put(A_TILE, b_slot[r], b_next[r]);
      }
    }
    workgroupBarrier();
  }

  // Column j of every invocation: 4 columns of the tile (one per ng), staged as
  // [ng][row][entry], then stored entry fastest.
  // unroll
  for (var j = 0u; j < {{TN}}u; j++) {
    // unroll
    for (var i = 0u; i < {{TM}}u; i++) {
      let row = LANES * (mg + 8u * (i / LANES)) + i % LANES;
      shared_put(0u, ng * STAGE_PITCH + row * (NB + 1u) + e, acc[i * TN + j]);
    }
    workgroupBarrier();
    // unroll
    for (var r = 0u; r < {{STORES}}u; r++) {
      let l = flat + r * THREADS;
      let entry = l % NB;
      let row = (l / NB) % BM;
      let q = l / (NB * BM);
      let bi = b_base + entry;
      let m = m_base + row;
      let n = n_base + LANES * (q + 4u * (j / LANES)) + j % LANES;
      if (bi < B && m < M && n < N) {
        c[bi + B * (m + M * n)] = shared_get(0u, q * STAGE_PITCH + row * (NB + 1u) + entry);
      }
    }
    workgroupBarrier();
  }
}
