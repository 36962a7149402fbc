// The copy planner's GENERIC case, shared by the strided copy kernels: the source element of
// destination element f, decomposing f column-major over dims (axis 0 fastest).
// params: [size, rank, offset, dims[rank]..., strides[rank]... (i32 bits)]
fn source_index(f: u32) -> u32 {
  let rank = params[1];
  var rest = f;
  var index = bitcast<i32>(params[2]);
  for (var i = 0u; i < rank; i++) {
    let extent = params[3u + i];
    index += i32(rest % extent) * bitcast<i32>(params[3u + rank + i]);
    rest = rest / extent;
  }
  return u32(index);
}
