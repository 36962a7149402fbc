// Scalar helpers for F32 GEMM kernels (conjugation is the identity on reals).
alias Scalar = f32;

fn load_scalar(v: f32, conj_sign: f32) -> f32 {
  return v;
}

fn mac(acc: f32, x: f32, y: f32) -> f32 {
  return acc + x * y;
}
