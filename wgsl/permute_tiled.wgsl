// A permutation of rank 3 and more (the copy planner's GROUPED case): the source's fastest
// axes (group A) and the destination's fastest (group B), each of at least 32 elements, form
// a 32 x 32 tile that goes through workgroup memory, so that both the read (along A) and the
// write (along B) touch consecutive addresses; the other axes are the batch, a tile per
// workgroup. A group may hold several short axes (2^24 elements of rank 24 reversed: five axes
// of 2 each side): the workgroup first writes the source and destination offsets of its 32
// A and 32 B indices into tables, so each element costs two table reads, not a decomposition.
//   dst[sum_i c_i * dst_stride_i] = src[offset + sum_i c_i * src_stride_i]
// params: [tiles_a, tiles_b, batches, offset, extent_a, extent_b, n_a, n_b, n_rest, then per
// axis of A, of B, of the rest: extent, source stride (signed), destination stride]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{{ELEM}}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{{ELEM}}>;

#include "grid.wgsl"

const TILE: u32 = 32u;
const PITCH: u32 = 33u;
const ROWS: u32 = {{ROWS}}u;
const HEADER: u32 = 9u;
var<workgroup> tile: array<{{ELEM}}, 1056>;  // TILE * PITCH
var<workgroup> src_at: array<i32, 64>;  // A's 32 source offsets, then B's
var<workgroup> dst_at: array<u32, 64>;

struct Offsets {
  src: i32,
  dst: u32,
}

// The offsets of a linear index over `count` axes starting at axis `first` of the params.
fn offsets_of(index: u32, first: u32, count: u32) -> Offsets {
  var rest = index;
  var at = Offsets(0, 0u);
  for (var i = 0u; i < count; i++) {
    let axis = HEADER + 3u * (first + i);
    let extent = params[axis];
    let c = rest % extent;
    rest /= extent;
    at.src += i32(c) * bitcast<i32>(params[axis + 1u]);
    at.dst += c * params[axis + 2u];
  }
  return at;
}

@compute @workgroup_size(32, {{ROWS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) flat: u32) {
  let tiles_a = params[0];
  let group = workgroup_index(wid, nwg);
  let batch = group / (tiles_a * params[1]);
  if (batch >= params[2]) {
    return;  // the grid's spare workgroups (uniform: the whole workgroup leaves)
  }
  let t = group % (tiles_a * params[1]);
  let a0 = (t % tiles_a) * TILE;
  let b0 = (t / tiles_a) * TILE;
  let extent_a = params[4];
  let extent_b = params[5];
  let n_a = params[6];
  let n_b = params[7];
  for (var i = flat; i < 2u * TILE; i += TILE * ROWS) {
    var at: Offsets;
    if (i < TILE) {
      at = offsets_of(a0 + i, 0u, n_a);
    } else {
      at = offsets_of(b0 + i - TILE, n_a, n_b);
    }
    src_at[i] = at.src;
    dst_at[i] = at.dst;
  }
  let base = offsets_of(batch, n_a + n_b, params[8]);
  let src_base = bitcast<i32>(params[3]) + base.src;
  workgroupBarrier();

  // unroll
  for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
    let row = lid.y + r * ROWS;  // along B
    if (a0 + lid.x < extent_a && b0 + row < extent_b) {
      tile[row * PITCH + lid.x] = src[src_base + src_at[lid.x] + src_at[TILE + row]];
    }
  }
  workgroupBarrier();
  // unroll
  for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
    let row = lid.y + r * ROWS;  // along A
    if (a0 + row < extent_a && b0 + lid.x < extent_b) {
      dst[base.dst + dst_at[row] + dst_at[TILE + lid.x]] = tile[lid.x * PITCH + row];
    }
  }
}
