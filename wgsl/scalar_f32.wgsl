// Scalar helpers for F32 GEMM kernels (conjugation is the identity on reals).
alias Scalar = f32;

fn load_scalar(v: f32, conj_sign: f32) -> f32 {
  return v;
}

// fma, not acc + x * y: WGSL leaves fusing a product and a sum to the compiler, and Dawn's
// SPIR-V reaches NVIDIA's driver as a multiply and an add.
fn mac(acc: f32, x: f32, y: f32) -> f32 {
  return fma(x, y, acc);
}

// A 16-byte vector as scalars (GEMM tiles live in workgroup memory as vec4<f32>).

fn lane_of(v: vec4<f32>, e: u32) -> f32 {
  return v[e];
}

fn with_lane(v: vec4<f32>, e: u32, x: f32) -> vec4<f32> {
  var w = v;
  w[e] = x;
  return w;
}

// Sum kernels read 16 bytes at a time: LANES scalars per vec4<f32>.
const LANES = 4u;

fn lanes_sum(v: vec4<f32>) -> f32 {
  return (v.x + v.y) + (v.z + v.w);
}
