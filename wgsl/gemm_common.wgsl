// Shared by the GEMM kernels: the params layout and the job of one workgroup.
// params: [M, N, K, batch, tiles_m, tiles_n, a_off, a_rs, a_cs, a_bs, b_off, b_rs, b_cs, b_bs,
//          a_conj_sign (f32 bits), b_conj_sign (f32 bits), k_total, k_step]
// A(m, k, bi) = a[a_off + m*a_rs + k*a_cs + bi*a_bs] (signed strides), likewise B, and
// c[m + M*n + M*N*bi]. Split-K runs chunks of K as the batch: chunk bi covers
// k_step*bi + [0, K), cut at k_total (k_step = 0 and k_total = K for an ordinary batch).
#include "grid.wgsl"

struct GemmJob {
  valid: bool,  // false for the padding workgroups of a grid spread over two dimensions
  m: u32,
  n: u32,
  k: u32,  // this job's contraction length
  bi: u32,
  tile_m: u32,
  tile_n: u32,
  a_base: i32,
  a_rs: i32,
  a_cs: i32,
  b_base: i32,
  b_rs: i32,
  b_cs: i32,
  a_sign: f32,
  b_sign: f32,
}

fn gemm_job(wid: vec3<u32>, nwg: vec3<u32>) -> GemmJob {
  var job: GemmJob;
  let group = workgroup_index(wid, nwg);
  let tiles_m = params[4];
  let tiles = tiles_m * params[5];
  job.bi = group / tiles;
  job.valid = job.bi < params[3];
  job.tile_m = (group % tiles) % tiles_m;
  job.tile_n = (group % tiles) / tiles_m;
  job.m = params[0];
  job.n = params[1];
  job.k = min(params[2], params[16] - min(params[16], job.bi * params[17]));
  job.a_rs = bitcast<i32>(params[7]);
  job.a_cs = bitcast<i32>(params[8]);
  job.a_base = bitcast<i32>(params[6]) + i32(job.bi) * bitcast<i32>(params[9]);
  job.b_rs = bitcast<i32>(params[11]);
  job.b_cs = bitcast<i32>(params[12]);
  job.b_base = bitcast<i32>(params[10]) + i32(job.bi) * bitcast<i32>(params[13]);
  job.a_sign = bitcast<f32>(params[14]);
  job.b_sign = bitcast<f32>(params[15]);
  return job;
}
