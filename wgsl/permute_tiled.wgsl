// A permutation of rank 3 and more (the copy planner's GROUPED case): the source's fastest
// axes (group A) and the destination's fastest (group B), each of at least 32 elements, form
// a 32 x 32 tile that goes through workgroup memory, so that both the read (along A) and the
// write (along B) touch consecutive addresses; the other axes are the batch. A workgroup moves
// one (A, B) tile at BATCHES consecutive batch indices (fewer in the last chunk), so its setup
// is paid once per BATCHES tiles. A group may hold several short axes (2^24 elements of rank 24
// reversed: five axes of 2 each side): the setup writes the source and destination offsets of
// the tile's 32 A and 32 B indices, and of its batches, into tables; each invocation then
// keeps its own rows' offsets in registers, so an element costs two adds. The loads of the
// next batch are issued before the stores of this one, so loads stay in flight.
//   dst[sum_i c_i * dst_stride_i] = src[offset + sum_i c_i * src_stride_i]
// params: [tiles_a, tiles_b, batches, offset, extent_a, extent_b, n_a, n_b, n_rest, then per
// axis of A, of B, of the rest: extent, source stride (signed), destination stride]
// grid: tiles_a * tiles_b * ceil(batches / BATCHES) workgroups, the tile index fastest.

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{{ELEM}}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{{ELEM}}>;

#include "grid.wgsl"

const TILE: u32 = 32u;
const PITCH: u32 = 33u;
const ROWS: u32 = {{ROWS}}u;
const PER: u32 = 32u / {{ROWS}}u;  // the rows each invocation moves
const BATCHES: u32 = {{BATCHES}}u;
const HEADER: u32 = 9u;
var<workgroup> tile: array<{{ELEM}}, 1056>;  // TILE * PITCH
// A's 32 offsets, then B's 32, then the workgroup's batches' (BATCHES at most 32)
var<workgroup> src_at: array<i32, 96>;
var<workgroup> dst_at: array<u32, 96>;

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

// The batch's offsets, from the table.
fn batch_offsets(k: u32) -> Offsets {
  return Offsets(src_at[2u * TILE + k], dst_at[2u * TILE + k]);
}

// This invocation's PER source elements of the batch at source offset `base`.
fn gather(base: i32, at: array<i32, PER>, ok: array<bool, PER>) -> array<{{ELEM}}, PER> {
  var v: array<{{ELEM}}, PER>;
  // unroll
  for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
    if (ok[r]) {
      v[r] = src[base + at[r]];
    }
  }
  return v;
}

@compute @workgroup_size(32, {{ROWS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) flat: u32) {
  let tiles_a = params[0];
  let tiles = tiles_a * params[1];
  let group = workgroup_index(wid, nwg);
  let first = (group / tiles) * BATCHES;  // the workgroup's first batch index
  let batches = params[2];
  if (first >= batches) {
    return;  // the grid's spare workgroups (uniform: the whole workgroup leaves)
  }
  let count = min(BATCHES, batches - first);  // uniform: the barriers below are too
  let t = group % tiles;
  let a0 = (t % tiles_a) * TILE;
  let b0 = (t / tiles_a) * TILE;
  let extent_a = params[4];
  let extent_b = params[5];
  let n_a = params[6];
  let n_b = params[7];
  let entries = 2u * TILE + count;
  for (var i = flat; i < entries; i += TILE * ROWS) {
    var at: Offsets;
    if (i < TILE) {
      at = offsets_of(a0 + i, 0u, n_a);
    } else if (i < 2u * TILE) {
      at = offsets_of(b0 + i - TILE, n_a, n_b);
    } else {
      at = offsets_of(first + i - 2u * TILE, n_a + n_b, params[8]);
    }
    src_at[i] = at.src;
    dst_at[i] = at.dst;
  }
  workgroupBarrier();

  // The read takes (A = a0 + lid.x, B = b0 + row), the write (A = a0 + row, B = b0 + lid.x).
  let read_a = bitcast<i32>(params[3]) + src_at[lid.x];
  let write_b = dst_at[TILE + lid.x];
  var read_at: array<i32, PER>;
  var write_at: array<u32, PER>;
  var read_ok: array<bool, PER>;
  var write_ok: array<bool, PER>;
  // unroll
  for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
    let row = lid.y + r * ROWS;
    read_at[r] = read_a + src_at[TILE + row];
    write_at[r] = write_b + dst_at[row];
    read_ok[r] = a0 + lid.x < extent_a && b0 + row < extent_b;
    write_ok[r] = a0 + row < extent_a && b0 + lid.x < extent_b;
  }

  var v = gather(batch_offsets(0u).src, read_at, read_ok);
  for (var k = 0u; k < count; k++) {
    // unroll
    for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
      if (read_ok[r]) {
        tile[(lid.y + r * ROWS) * PITCH + lid.x] = v[r];
      }
    }
    workgroupBarrier();
    if (k + 1u < count) {
      v = gather(batch_offsets(k + 1u).src, read_at, read_ok);
    }
    let base = batch_offsets(k).dst;
    // unroll
    for (var r = 0u; r < 32u / {{ROWS}}u; r++) {
      if (write_ok[r]) {
        dst[base + write_at[r]] = tile[lid.x * PITCH + lid.y + r * ROWS];
      }
    }
    workgroupBarrier();
  }
}
