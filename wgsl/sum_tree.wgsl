// Sums over the K axis of a strided operand, one workgroup per (output, chunk of K): its WG
// invocations read the chunk WG apart (consecutive when k_stride is 1), then add up their
// partial sums as a tree in workgroup memory, or, with SUBGROUPS, each subgroup adds its own
// (subgroupAdd) and invocation 0 adds up those, after a single barrier. With VEC (k_stride is
// 1), the chunk is read 16 bytes at a time: LANES scalars per load, the loads that straddle
// the chunk's ends masked lane by lane, so any offset and length work. Either way the order of
// the additions is fixed: results repeat bit for bit.
//   out[o + c * M * B] = sum over k in chunk c of x[offset + m * m_stride + b * b_stride
//                                                  + k * k_stride],  o = m + M * b
// With several chunks, `out` holds partial sums that a second pass adds up.
// params: [M, K, chunk length, chunks, offset, m_stride, k_stride, B, b_stride] (offset and
// the strides signed)

#if SUBGROUPS
enable subgroups;
#endif
#include "scalar_{{SCALAR}}.wgsl"
#include "grid.wgsl"

@group(0) @binding(0) var<storage, read> params: array<u32>;
#if VEC
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
#else
@group(0) @binding(1) var<storage, read> x: array<Scalar>;
#endif
@group(0) @binding(2) var<storage, read_write> out: array<Scalar>;

const WG = {{WG}}u;

var<workgroup> partial: array<Scalar, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
#if SUBGROUPS
        @builtin(subgroup_invocation_id) lane: u32,
#endif
        @builtin(local_invocation_index) lid: u32) {
  let group = workgroup_index(wid, nwg);
  let outputs = params[0] * params[7];
  let o = group % outputs;
  let c = group / outputs;
  if (c >= params[3]) {
    return;  // the grid's spare workgroups (uniform: the whole workgroup leaves)
  }
  let k_begin = c * params[2];
  let k_end = min(k_begin + params[2], params[1]);
  let base = bitcast<i32>(params[4]) + i32(o % params[0]) * bitcast<i32>(params[5])
      + i32(o / params[0]) * bitcast<i32>(params[8]);
  var total = Scalar();
#if VEC
  // Elements [first, last) of x; lowering checked that they are in bounds (first >= 0).
  let first = u32(base) + k_begin;
  let last = u32(base) + k_end;
  let v_end = (last + LANES - 1u) / LANES;
  var whole = vec4<f32>();
  for (var v = first / LANES + lid; v < v_end; v += WG) {
    let q = x[v];
    if (v * LANES >= first && v * LANES + LANES <= last) {
      whole += q;
    } else {
      for (var e = 0u; e < LANES; e++) {
        let i = v * LANES + e;
        if (i >= first && i < last) {
          total += lane_of(q, e);
        }
      }
    }
  }
  total += lanes_sum(whole);
#else
  let k_stride = bitcast<i32>(params[6]);
  for (var k = k_begin + lid; k < k_end; k += WG) {
    total += x[base + i32(k) * k_stride];
  }
#endif
#if SUBGROUPS
  // A subgroup's invocations need not have consecutive indices: its first one stores the
  // subgroup's sum at its own index, the others zero.
  let subtotal = subgroupAdd(total);
  partial[lid] = select(Scalar(), subtotal, lane == 0u);
  workgroupBarrier();
  if (lid == 0u) {
    var sum = Scalar();
    for (var i = 0u; i < WG; i++) {
      sum += partial[i];
    }
    out[o + c * outputs] = sum;
  }
#else
  partial[lid] = total;
  workgroupBarrier();
  for (var half = WG / 2u; half > 0u; half >>= 1u) {
    if (lid < half) {
      partial[lid] += partial[lid + half];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    out[o + c * outputs] = partial[0];
  }
#endif
}
