// The lane's memory-bandwidth ceiling (bench/ceiling/): the plainest kernels that move a
// buffer, with 16-byte loads, a grid-stride loop over WORKGROUPS workgroups of 256.
//   copy: dst[i] = src[i];   sum: partial[workgroup] = sum of its stripes of src
// params: [vec4 count]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

const WG = 256u;
var<workgroup> partial: array<vec4<f32>, WG>;

@compute @workgroup_size(WG)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let stride = nwg.x * WG;
  for (var i = gid.x; i < params[0]; i += stride) {
    dst[i] = src[i];
  }
}

@compute @workgroup_size(WG)
fn sum(@builtin(global_invocation_id) gid: vec3<u32>,
       @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(workgroup_id) wid: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
  let stride = nwg.x * WG;
  var total = vec4<f32>();
  for (var i = gid.x; i < params[0]; i += stride) {
    total += src[i];
  }
  partial[lid] = total;
  workgroupBarrier();
  for (var half = WG / 2u; half > 0u; half >>= 1u) {
    if (lid < half) {
      partial[lid] += partial[lid + half];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    dst[wid.x] = partial[0];
  }
}
