// A batch of compact matrices written transposed (the copy planner's TILED case):
//   dst[i + d0*j + d0*d1*b] = src[offset + i*d1 + j + d0*d1*b]
// A 32x32 tile goes through workgroup memory so both the read (along j) and the write
// (along i) touch consecutive addresses; the row pitch of 33 avoids bank conflicts. The
// workgroup is 32 x ROWS invocations, each moving 32 / ROWS elements: more elements per
// invocation keep more loads in flight on GPUs, and CPU adapters pay for a barrier per
// group of invocations (SwiftShader: 16 x 16 tiles of one element each made a 1024^2
// transpose 17x slower than the strided gather).
// params: [d0, d1, offset, tiles_j, tiles_i, batch]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{{ELEM}}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{{ELEM}}>;

#include "grid.wgsl"

const TILE: u32 = 32u;
const PITCH: u32 = 33u;
const ROWS: u32 = {{ROWS}}u;
var<workgroup> tile: array<{{ELEM}}, 1056>;  // TILE * PITCH

@compute @workgroup_size(32, {{ROWS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let d0 = params[0];
  let d1 = params[1];
  let offset = params[2];
  let tiles_j = params[3];
  let tiles_i = params[4];
  let group = workgroup_index(wid, nwg);
  let b = group / (tiles_j * tiles_i);
  if (b >= params[5]) {
    return;
  }
  let t = group % (tiles_j * tiles_i);
  let j0 = (t % tiles_j) * TILE;
  let i0 = (t / tiles_j) * TILE;
  let base = b * d0 * d1;

  // unroll
  for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
    let row = lid.y + r * ROWS;
    let i = i0 + row;
    let j = j0 + lid.x;
    if (i < d0 && j < d1) {
      tile[row * PITCH + lid.x] = src[offset + base + i * d1 + j];
    }
  }
  workgroupBarrier();
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
