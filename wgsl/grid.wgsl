// The launch grid, shared by every kernel: the runtime spreads a workgroup count over x and y
// (each at most maxComputeWorkgroupsPerDimension), and kernels see one linear index.
fn workgroup_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.y * nwg.x + wid.x;
}
