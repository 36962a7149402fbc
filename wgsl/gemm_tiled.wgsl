// Batched GEMM for GPUs: BK-deep tiles of A (BM rows) and B (BN columns) staged through
// workgroup memory, a TM x TN register block per invocation (a 16 x 16 workgroup, so
// BM = 16*TM, BN = 16*TN).
//   c[m + M*n + M*N*bi] = sum_k A(m, k, bi) * B(k, n, bi)
// with A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides; likewise B), so
// transposed and offset operands are read in place. Out-of-range elements load as zero.
//
// Tiles are stored K-major as 16-byte vectors of LANES scalars along M (A) or N (B), so each
// step of the inner product reads an invocation's TM + TN operands with (TM + TN) / LANES
// vector loads: lanes of a warp read consecutive vectors (A) or one broadcast (B). An
// invocation owns the LANES consecutive rows from LANES*(lid.x + 16*g), for each g < TM/LANES
// (likewise columns from lid.y).
//
// Global loads bring groups of LANES consecutive scalars along the operand's contiguous axis
// (A_K_FAST: along K, else along M; likewise B_K_FAST), one 16-byte load when the group is
// aligned and in range (VEC_A, VEC_B, f32 only), so neighbouring invocations read neighbouring
// addresses. A group along M or N is one vector store into the tile; a group along K is LANES
// component stores. The loads of the next tile are in flight while this one is multiplied;
// with BUFFERS = 2 the tiles are double-buffered (one barrier per tile), with 1 the stores wait
// for a second barrier. With VEC_C (f32, M a multiple of 4) each invocation writes its LANES
// consecutive rows of a column as one 16-byte store. With SPREAD_M (f32, for an M where 16-byte
// stores would start unaligned) an invocation owns rows lid.x + 16*i instead, read one 4-byte
// load each from A's tile (then kept in scalars), so that a warp's store covers 16 consecutive
// rows of a column (whole 32-byte sectors) rather than every fourth one. Every loop with a
// constant trip count is unrolled at render time, so the register blocks are indexed with
// constants and stay in registers.
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
#if VEC_C
@group(0) @binding(3) var<storage, read_write> c: array<vec4<f32>>;
#else
@group(0) @binding(3) var<storage, read_write> c: array<Scalar>;
#endif

#include "gemm_common.wgsl"

const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const BK: u32 = {{BK}}u;
const BUFFERS: u32 = {{BUFFERS}}u;
const A_K_FAST: bool = {{A_K_FAST}};
const B_K_FAST: bool = {{B_K_FAST}};
// LANES (scalars per 16-byte vector) comes from scalar_{{SCALAR}}.wgsl.
const W: u32 = 16u;
const BM: u32 = W * TM;
const BN: u32 = W * TN;
const THREADS: u32 = W * W;
// Vectors per tile row (one k), and per tile.
const BMV: u32 = BM / LANES;
const BNV: u32 = BN / LANES;
const A_TILE: u32 = BK * BMV;
const B_TILE: u32 = BK * BNV;
// f32 words per scalar.
const WORDS: u32 = 4u / LANES;

#if SPREAD_M
// Scalars (f32 words), so that an invocation's rows 16 apart are plain 4-byte loads.
var<workgroup> a_tile: array<f32, BUFFERS * A_TILE * 4u>;
#else
var<workgroup> a_tile: array<vec4<f32>, BUFFERS * A_TILE>;
#endif
var<workgroup> b_tile: array<vec4<f32>, BUFFERS * B_TILE>;

// The group of LANES scalars of A from (m, k) along its fast axis; zeros past the edges.
fn load_a(job: GemmJob, m: u32, k: u32) -> vec4<f32> {
  let index = job.a_base + i32(m) * job.a_rs + i32(k) * job.a_cs;
  let step = select(job.a_rs, job.a_cs, A_K_FAST);
#if VEC_A
  if (m + select(3u, 0u, A_K_FAST) < job.m && k + select(0u, 3u, A_K_FAST) < job.k) {
    return a[u32(index) >> 2u];
  }
#endif
  var group = vec4<f32>();  // explicit zero: out-of-range elements must contribute nothing
  // unroll
  for (var e = 0u; e < {{LANES}}u; e++) {
    if (m + select(e, 0u, A_K_FAST) < job.m && k + select(0u, e, A_K_FAST) < job.k) {
      let at = u32(index + i32(e) * step);
#if VEC_A
      group[e] = a[at >> 2u][at & 3u];
#else
      group = with_lane(group, e, load_scalar(a[at], job.a_sign));
#endif
    }
  }
  return group;
}

fn load_b(job: GemmJob, k: u32, n: u32) -> vec4<f32> {
  let index = job.b_base + i32(k) * job.b_rs + i32(n) * job.b_cs;
  let step = select(job.b_cs, job.b_rs, B_K_FAST);
#if VEC_B
  if (n + select(3u, 0u, B_K_FAST) < job.n && k + select(0u, 3u, B_K_FAST) < job.k) {
    return b[u32(index) >> 2u];
  }
#endif
  var group = vec4<f32>();
  // unroll
  for (var e = 0u; e < {{LANES}}u; e++) {
    if (n + select(e, 0u, B_K_FAST) < job.n && k + select(0u, e, B_K_FAST) < job.k) {
      let at = u32(index + i32(e) * step);
#if VEC_B
      group[e] = b[at >> 2u][at & 3u];
#else
      group = with_lane(group, e, load_scalar(b[at], job.b_sign));
#endif
    }
  }
  return group;
}

// Tile position of group l of a tile load: (k, m) for A, (k, n) for B.
fn a_group(l: u32) -> vec2<u32> {
  if (A_K_FAST) { return vec2<u32>((l % (BK / LANES)) * LANES, l / (BK / LANES)); }
  return vec2<u32>(l / BMV, (l % BMV) * LANES);
}

fn b_group(l: u32) -> vec2<u32> {
  if (B_K_FAST) { return vec2<u32>((l % (BK / LANES)) * LANES, l / (BK / LANES)); }
  return vec2<u32>(l / BNV, (l % BNV) * LANES);
}

fn store_a(base: u32, at: vec2<u32>, group: vec4<f32>) {
  if (!A_K_FAST) {
#if SPREAD_M
    let word = (base + at.x * BMV + at.y / LANES) * 4u;
    // unroll
    for (var e = 0u; e < 4u; e++) {
      a_tile[word + e] = group[e];
    }
#else
    a_tile[base + at.x * BMV + at.y / LANES] = group;
#endif
    return;
  }
  let lane = at.y % LANES;
  // unroll
  for (var e = 0u; e < {{LANES}}u; e++) {
    // unroll
    for (var w = 0u; w < 4u / {{LANES}}u; w++) {
#if SPREAD_M
      a_tile[(base + (at.x + e) * BMV + at.y / LANES) * 4u + lane * WORDS + w] =
          group[e * WORDS + w];
#else
      a_tile[base + (at.x + e) * BMV + at.y / LANES][lane * WORDS + w] = group[e * WORDS + w];
#endif
    }
  }
}

fn store_b(base: u32, at: vec2<u32>, group: vec4<f32>) {
  if (!B_K_FAST) {
    b_tile[base + at.x * BNV + at.y / LANES] = group;
    return;
  }
  let lane = at.y % LANES;
  // unroll
  for (var e = 0u; e < {{LANES}}u; e++) {
    // unroll
    for (var w = 0u; w < 4u / {{LANES}}u; w++) {
      b_tile[base + (at.x + e) * BNV + at.y / LANES][lane * WORDS + w] = group[e * WORDS + w];
    }
  }
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
  let m_base = job.tile_m * BM;
  let n_base = job.tile_n * BN;

  var a_at: array<vec2<u32>, {{LOADS_A}}>;
  var b_at: array<vec2<u32>, {{LOADS_B}}>;
  var a_next: array<vec4<f32>, {{LOADS_A}}>;
  var b_next: array<vec4<f32>, {{LOADS_B}}>;
  // unroll
  for (var r = 0u; r < {{LOADS_A}}u; r++) {
    a_at[r] = a_group(flat + r * THREADS);
    a_next[r] = load_a(job, m_base + a_at[r].y, a_at[r].x);
  }
  // unroll
  for (var r = 0u; r < {{LOADS_B}}u; r++) {
    b_at[r] = b_group(flat + r * THREADS);
    b_next[r] = load_b(job, b_at[r].x, n_base + b_at[r].y);
  }
  // unroll
  for (var r = 0u; r < {{LOADS_A}}u; r++) {
    store_a(0u, a_at[r], a_next[r]);
  }
  // unroll
  for (var r = 0u; r < {{LOADS_B}}u; r++) {
    store_b(0u, b_at[r], b_next[r]);
  }
  workgroupBarrier();

  var acc: array<Scalar, TM * TN>;
  // unroll
  for (var i = 0u; i < {{TM}}u * {{TN}}u; i++) {
    acc[i] = Scalar();
  }
  var av: array<Scalar, TM>;
  var bv: array<Scalar, TN>;
  let tiles_k = (job.k + BK - 1u) / BK;
  for (var t = 0u; t < tiles_k; t++) {
    let more = t + 1u < tiles_k;
    // The next tile's global loads are issued before this tile is multiplied.
    if (more) {
      let k0 = (t + 1u) * BK;
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
        a_next[r] = load_a(job, m_base + a_at[r].y, k0 + a_at[r].x);
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        b_next[r] = load_b(job, k0 + b_at[r].x, n_base + b_at[r].y);
      }
    }
    let a_cur = (t % BUFFERS) * A_TILE;
    let b_cur = (t % BUFFERS) * B_TILE;
    // unroll
    for (var kk = 0u; kk < {{BK}}u; kk++) {
#if SPREAD_M
      // unroll
      for (var i = 0u; i < {{TM}}u; i++) {
        av[i] = a_tile[(a_cur + kk * BMV) * 4u + lid.x + W * i];
      }
#else
      // unroll
      for (var g = 0u; g < {{TM}}u / {{LANES}}u; g++) {
        let v = a_tile[a_cur + kk * BMV + lid.x + W * g];
        // unroll
        for (var e = 0u; e < {{LANES}}u; e++) {
          av[g * LANES + e] = lane_of(v, e);
        }
      }
#endif
      // unroll
      for (var g = 0u; g < {{TN}}u / {{LANES}}u; g++) {
        let v = b_tile[b_cur + kk * BNV + lid.y + W * g];
        // unroll
        for (var e = 0u; e < {{LANES}}u; e++) {
          bv[g * LANES + e] = lane_of(v, e);
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
    if (BUFFERS == 1u) {
      workgroupBarrier();  // every read of this tile is done before it is overwritten
    }
    if (more) {
      let a_nxt = ((t + 1u) % BUFFERS) * A_TILE;
      let b_nxt = ((t + 1u) % BUFFERS) * B_TILE;
      // unroll
      for (var r = 0u; r < {{LOADS_A}}u; r++) {
        store_a(a_nxt, a_at[r], a_next[r]);
      }
      // unroll
      for (var r = 0u; r < {{LOADS_B}}u; r++) {
        store_b(b_nxt, b_at[r], b_next[r]);
      }
    }
    workgroupBarrier();
  }

  let out_base = job.bi * job.m * job.n;
#if VEC_C
  // M is a multiple of 4 (f32): an invocation's LANES consecutive rows are one aligned vector,
  // so a warp writes whole 16-byte words of each column.
  // unroll
  for (var g = 0u; g < {{TM}}u / 4u; g++) {
    let m = m_base + LANES * (lid.x + W * g);
    // unroll
    for (var j = 0u; j < {{TN}}u; j++) {
      let n = n_base + LANES * (lid.y + W * (j / LANES)) + j % LANES;
      if (m < job.m && n < job.n) {
        c[(out_base + n * job.m + m) / 4u] = vec4<f32>(acc[(4u * g) * TN + j],
            acc[(4u * g + 1u) * TN + j], acc[(4u * g + 2u) * TN + j], acc[(4u * g + 3u) * TN + j]);
      }
    }
  }
#else
  // unroll
  for (var i = 0u; i < {{TM}}u; i++) {
#if SPREAD_M
    let m = m_base + lid.x + W * i;
#else
    let m = m_base + LANES * (lid.x + W * (i / LANES)) + i % LANES;
#endif
    // unroll
    for (var j = 0u; j < {{TN}}u; j++) {
      let n = n_base + LANES * (lid.y + W * (j / LANES)) + j % LANES;
      if (m < job.m && n < job.n) {
        c[out_base + n * job.m + m] = acc[i * TN + j];
      }
    }
  }
#endif
}
