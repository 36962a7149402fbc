// Generic strided gather for 1-byte elements (Bool). WGSL has no 8-bit storage type, so each
// invocation assembles one 32-bit word of the destination from four gathered source bytes.
//   dst byte f = src byte (offset + sum_i coord_i(f) * stride_i)

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

#include "grid.wgsl"
#include "strided_index.wgsl"

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = workgroup_index(wid, nwg) * 256u + lid;
  let size = params[0];
  if (word * 4u >= size) {
    return;
  }
  var packed = 0u;
  for (var j = 0u; j < 4u; j++) {
    let f = word * 4u + j;
    if (f < size) {
      let byte_index = source_index(f);
      packed |= ((src[byte_index >> 2u] >> ((byte_index & 3u) * 8u)) & 0xffu) << (j * 8u);
    }
  }
  dst[word] = packed;
}
