// The second half of split-K: out[f] = sum over chunks s of partial[f + s*size], where the
// GEMM wrote one partial result per chunk of K as its batch.
// params: [size, chunks]

#include "scalar_{{SCALAR}}.wgsl"
#include "grid.wgsl"

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> partial: array<Scalar>;
@group(0) @binding(2) var<storage, read_write> out: array<Scalar>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let f = workgroup_index(wid, nwg) * 256u + lid;
  let size = params[0];
  if (f >= size) {
    return;
  }
  var total = Scalar();
  for (var s = 0u; s < params[1]; s++) {
    total += partial[f + s * size];
  }
  out[f] = total;
}
