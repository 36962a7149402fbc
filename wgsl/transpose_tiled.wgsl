// A batch of compact matrices written transposed (the copy planner's TILED case):
//   dst[i + d0*j + d0*d1*b] = src[offset + i*d1 + j + d0*d1*b]
// A 16x16 tile goes through workgroup memory so both the read (along j) and the write
// (along i) touch consecutive addresses. The row pitch of 17 avoids bank conflicts.
// params: [d0, d1, offset, tiles_j, tiles_i, batch]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{{ELEM}}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{{ELEM}}>;

#include "grid.wgsl"

const TILE: u32 = 16u;
const PITCH: u32 = 17u;
var<workgroup> tile: array<{{ELEM}}, 272>;

@compute @workgroup_size(16, 16)
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

  let i = i0 + lid.y;
  let j = j0 + lid.x;
  if (i < d0 && j < d1) {
    tile[lid.y * PITCH + lid.x] = src[offset + base + i * d1 + j];
  }
  workgroupBarrier();
  let wi = i0 + lid.x;
  let wj = j0 + lid.y;
  if (wi < d0 && wj < d1) {
    dst[base + wj * d0 + wi] = tile[lid.x * PITCH + lid.y];
  }
}
