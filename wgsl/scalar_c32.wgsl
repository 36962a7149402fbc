// Scalar helpers for C32 GEMM kernels: interleaved (re, im) f32 pairs, one complex
// multiply-add per step (4 real FMAs). conj_sign is -1 to conjugate on load, +1 otherwise.
alias Scalar = vec2<f32>;

fn load_scalar(v: vec2<f32>, conj_sign: f32) -> vec2<f32> {
  return vec2<f32>(v.x, v.y * conj_sign);
}

fn mac(acc: vec2<f32>, x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(fma(x.x, y.x, fma(-x.y, y.y, acc.x)), fma(x.x, y.y, fma(x.y, y.x, acc.y)));
}
