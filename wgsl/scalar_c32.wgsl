// Scalar helpers for C32 GEMM kernels: interleaved (re, im) f32 pairs, one complex
// multiply-add per step (4 real FMAs). conj_sign is -1 to conjugate on load, +1 otherwise.
alias Scalar = vec2<f32>;

fn load_scalar(v: vec2<f32>, conj_sign: f32) -> vec2<f32> {
  return vec2<f32>(v.x, v.y * conj_sign);
}

fn mac(acc: vec2<f32>, x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(fma(x.x, y.x, fma(-x.y, y.y, acc.x)), fma(x.x, y.y, fma(x.y, y.x, acc.y)));
}

// A 16-byte vector as scalars (GEMM tiles live in workgroup memory as vec4<f32>).

fn lane_of(v: vec4<f32>, e: u32) -> vec2<f32> {
  return vec2<f32>(v[2u * e], v[2u * e + 1u]);
}

fn with_lane(v: vec4<f32>, e: u32, x: vec2<f32>) -> vec4<f32> {
  var w = v;
  w[2u * e] = x.x;
  w[2u * e + 1u] = x.y;
  return w;
}

// Sum kernels read 16 bytes at a time: LANES scalars per vec4<f32>.
const LANES = 2u;

fn lanes_sum(v: vec4<f32>) -> vec2<f32> {
  return v.xy + v.zw;
}
