// Sums over the K axis of a strided operand, one invocation per (output, chunk of K):
//   out[o + c * M * B] = sum over k in chunk c of x[offset + m * m_stride + b * b_stride
//                                                  + k * k_stride],  o = m + M * b
// Reads are consecutive across invocations when m_stride is 1, and within one when k_stride
// is. No workgroup memory, no barriers: CPU adapters prefer it, and GPUs when there are many
// outputs. With VEC (m_stride 1; offset, k_stride, b_stride and M multiples of LANES) one
// invocation sums LANES neighbouring outputs with 16-byte loads. With several chunks, `out`
// holds partial sums that a second pass adds up.
// params: [M, K, chunk length, chunks, offset, m_stride, k_stride, B, b_stride] (offset and
// the strides signed)

#include "scalar_{{SCALAR}}.wgsl"
#include "grid.wgsl"

#if VEC
alias Load = vec4<f32>;
#else
alias Load = Scalar;
#endif

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<Load>;
@group(0) @binding(2) var<storage, read_write> out: array<Scalar>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = workgroup_index(wid, nwg) * 256u + lid;
#if VEC
  let width = LANES;
#else
  let width = 1u;
#endif
  let m_count = params[0] / width;  // loads per batch entry's outputs
  let loads = m_count * params[7];
  if (i >= loads * params[3]) {
    return;
  }
  let m = i % m_count;  // in loads
  let b = (i % loads) / m_count;
  let c = i / loads;
  let k_begin = c * params[2];
  let k_len = min(params[2], params[1] - k_begin);
  let k_stride = bitcast<i32>(params[6]) / i32(width);
  var at = (bitcast<i32>(params[4]) + i32(b) * bitcast<i32>(params[8])) / i32(width)
      + i32(m) * bitcast<i32>(params[5]) + i32(k_begin) * k_stride;
  // Four partial sums: shorter dependency chains, and a little less rounding for long K.
  var total = array<Load, 4>();
  var k = 0u;
  for (; k + 4u <= k_len; k += 4u) {
    total[0] += x[at];
    total[1] += x[at + k_stride];
    total[2] += x[at + 2 * k_stride];
    total[3] += x[at + 3 * k_stride];
    at += 4 * k_stride;
  }
  for (; k < k_len; k++) {
    total[0] += x[at];
    at += k_stride;
  }
  let sum = (total[0] + total[1]) + (total[2] + total[3]);
#if VEC
  for (var e = 0u; e < LANES; e++) {
    out[(m + b * m_count) * LANES + e + c * params[0] * params[7]] = lane_of(sum, e);
  }
#else
  out[i] = sum;
#endif
}
