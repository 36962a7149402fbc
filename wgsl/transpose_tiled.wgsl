// A batch of compact matrices written transposed (the copy planner's TILED case):
//   dst[i + d0*j + d0*d1*b] = src[offset + i*d1 + j + d0*d1*b]
// A 32x32 tile goes through workgroup memory so both the read (along j) and the write
// (along i) touch consecutive addresses; the row pitch of 33 avoids bank conflicts. The
// workgroup is 32 x ROWS invocations, each moving 32 / ROWS elements: more elements per
// invocation keep more loads in flight on GPUs, and CPU adapters pay for a barrier per
// group of invocations (SwiftShader: 16 x 16 tiles of one element each made a 1024^2
// transpose 17x slower than the strided gather). A workgroup moves TILES consecutive tiles
// along j (fewer at the matrix's edge), the loads of the next one issued before the stores
// of this one, so loads stay in flight across the barrier. Consecutive workgroups go along j,
// or along i where params[6] is set (destination rows that are not whole cache lines: the
// parts of a line then come from neighbouring workgroups).
// params: [d0, d1, offset, groups_j (tile groups along j), tiles_i, batch, i_fast]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{{ELEM}}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{{ELEM}}>;

#include "grid.wgsl"

const TILE: u32 = 32u;
const PITCH: u32 = 33u;
const ROWS: u32 = {{ROWS}}u;
const PER: u32 = 32u / {{ROWS}}u;  // the rows each invocation moves
const TILES: u32 = {{TILES}}u;
var<workgroup> tile: array<{{ELEM}}, 1056>;  // TILE * PITCH

// This invocation's PER elements of the tile at (i0, j0) of the matrix at `base`.
fn gather(base: u32, i0: u32, j0: u32, d0: u32, d1: u32, x: u32, y: u32) -> array<{{ELEM}}, PER> {
  var v: array<{{ELEM}}, PER>;
  let j = j0 + x;
  // unroll
  for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
    let i = i0 + y + r * ROWS;
    if (i < d0 && j < d1) {
      v[r] = src[base + i * d1 + j];
    }
  }
  return v;
}

@compute @workgroup_size(32, {{ROWS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let d0 = params[0];
  let d1 = params[1];
  let groups_j = params[3];
  let tiles_i = params[4];
  let group = workgroup_index(wid, nwg);
  let b = group / (groups_j * tiles_i);
  if (b >= params[5]) {
    return;
  }
  let g = group % (groups_j * tiles_i);
  var gj = g % groups_j;
  var gi = g / groups_j;
  if (params[6] != 0u) {
    gj = g / tiles_i;
    gi = g % tiles_i;
  }
  let first_j = gj * TILES * TILE;
  let i0 = gi * TILE;
  let base = b * d0 * d1;
  var v = gather(params[2] + base, i0, first_j, d0, d1, lid.x, lid.y);
  for (var t = 0u; t < TILES; t++) {
    let j0 = first_j + t * TILE;
    if (j0 >= d1) {
      break;
    }
    if (t > 0u) {
      workgroupBarrier();  // the stores of the tile before have read it
    }
    // unroll
    for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
      tile[(lid.y + r * ROWS) * PITCH + lid.x] = v[r];
    }
    workgroupBarrier();
    if (t + 1u < TILES) {
      v = gather(params[2] + base, i0, j0 + TILE, d0, d1, lid.x, lid.y);
    }
    // unroll
    for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
      let row = lid.y + r * ROWS;
      let wi = i0 + lid.x;
      let wj = j0 + row;
      if (wi < d0 && wj < d1) {
        dst[base + wj * d0 + wi] = tile[lid.x * PITCH + row];
      }
    }
  }
}
