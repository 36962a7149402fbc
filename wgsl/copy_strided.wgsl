// Generic strided gather into a compact column-major tensor, for 4- or 8-byte elements:
//   dst[f] = src[offset + sum_i coord_i(f) * stride_i]
// where coord is the column-major decomposition of f over dims (axis 0 fastest).
// Serves compaction, transpose and dot_general packing (the copy planner's GENERIC case).
// params: [size, rank, offset, dims[rank]..., strides[rank]... (i32 bits)]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{{ELEM}}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{{ELEM}}>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  // The grid may be split over y when the workgroup count exceeds the per-dimension limit.
  let f = (wid.y * nwg.x + wid.x) * WG + lid;
  let size = params[0];
  if (f >= size) {
    return;
  }
  let rank = params[1];
  var rest = f;
  var index = bitcast<i32>(params[2]);
  for (var i = 0u; i < rank; i++) {
    let extent = params[3u + i];
    index += i32(rest % extent) * bitcast<i32>(params[3u + rank + i]);
    rest = rest / extent;
  }
  dst[f] = src[u32(index)];
}
