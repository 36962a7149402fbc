// Generic strided gather into a compact column-major tensor, for 4- or 8-byte elements:
//   dst[f] = src[offset + sum_i coord_i(f) * stride_i]
// Serves compaction, transpose and dot_general packing (the copy planner's GENERIC case).

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{{ELEM}}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{{ELEM}}>;

#include "grid.wgsl"
#include "strided_index.wgsl"

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let f = workgroup_index(wid, nwg) * 256u + lid;
  if (f >= params[0]) {
    return;
  }
  dst[f] = src[source_index(f)];
}
