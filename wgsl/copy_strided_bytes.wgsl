// Generic strided gather for 1-byte elements (Bool). WGSL has no 8-bit storage type, so each
// invocation assembles one 32-bit word of the destination from four gathered source bytes.
//   dst byte f = src byte (offset + sum_i coord_i(f) * stride_i)
// params: [size, rank, offset, dims[rank]..., strides[rank]... (i32 bits)]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

const WG: u32 = 256u;

fn source_byte(f: u32, rank: u32) -> u32 {
  var rest = f;
  var index = bitcast<i32>(params[2]);
  for (var i = 0u; i < rank; i++) {
    let extent = params[3u + i];
    index += i32(rest % extent) * bitcast<i32>(params[3u + rank + i]);
    rest = rest / extent;
  }
  let byte_index = u32(index);
  return (src[byte_index >> 2u] >> ((byte_index & 3u) * 8u)) & 0xffu;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = (wid.y * nwg.x + wid.x) * WG + lid;
  let size = params[0];
  if (word * 4u >= size) {
    return;
  }
  let rank = params[1];
  var packed = 0u;
  for (var j = 0u; j < 4u; j++) {
    let f = word * 4u + j;
    if (f < size) {
      packed |= source_byte(f, rank) << (j * 8u);
    }
  }
  dst[word] = packed;
}
