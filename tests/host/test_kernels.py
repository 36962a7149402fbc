"""WGSL templating: every kernel renders completely, and nothing is left half-specialised."""

import re
from importlib.resources import files

import pytest

import tenferro_web as tw
from tenferro_web.lowering.kernels import (
    KernelKey,
    buffer_bindings,
    kernel_source,
    render,
    unroll,
)


def test_rendering_substitutes_and_includes():
    text = render(KernelKey.of("gemm_blocked", SCALAR="c32", TM=2, TN=3, WX=8, WY=4))
    assert "{{" not in text and "#include" not in text
    assert "alias Scalar = vec2<f32>;" in text
    assert "@workgroup_size(8, 4)" in text


def test_marked_loops_are_unrolled_with_literal_counters_in_their_own_blocks():
    text = render(KernelKey.of("gemm_blocked", SCALAR="f32", TM=2, TN=3, WX=8, WY=4))
    assert "// unroll" not in text
    assert "acc[2u * 2u + 1u] = mac(acc[2u * 2u + 1u], av[1u], bv);" in text
    assert text.count("let bv = ") == 3  # one per unrolled column, each in its own block
    src = """  // unroll
  for (var i = 0u; i < 2u; i++) {
    let x = v[i];
    // unroll
    for (var j = 0u; j < 2u; j++) {
      w[i + j] = x;
    }
  }
  done();
"""
    out = unroll(src)
    assert "for (" not in out and out.count("let x") == 2 and "w[1u + 1u] = x;" in out
    assert out.rstrip().endswith("done();")


def test_missing_or_unknown_constants_are_refused():
    with pytest.raises(ValueError, match="placeholders"):
        render(KernelKey.of("gemm_blocked", SCALAR="f32"))
    with pytest.raises(ValueError, match="placeholders"):
        render(KernelKey.of("copy_strided", ELEM="u32", EXTRA=1))


def test_keys_are_canonical():
    assert KernelKey.of("k", A=1, B=2) == KernelKey.of("k", B=2, A=1)
    assert KernelKey.of("k", A=1).label == "k[A=1]"


def test_every_shipped_wgsl_file_is_a_kernel_or_included_by_one():
    names = {p.name[:-5] for p in (files("tenferro_web") / "wgsl").iterdir()
             if p.name.endswith(".wgsl")}
    kernels = {n for n in names if "fn main(" in kernel_source(n)}
    assert kernels == {"copy_strided", "copy_strided_bytes", "transpose_tiled", "permute_tiled",
                       "gemm_blocked", "gemm_tiled", "gemm_batch_tiled", "reduce_chunks",
                       "sum_rows", "sum_tree"}
    included = set()
    for name in names:
        for target in re.findall(r'^#include "([a-z0-9_{}A-Z]+)\.wgsl"$', kernel_source(name),
                                 re.MULTILINE):
            for scalar in ("f32", "c32"):
                included.add(target.replace("{{SCALAR}}", scalar))
    assert names == kernels | included, names - kernels - included


def test_selection_by_profile_and_shape():
    from tenferro_web.dtypes import DType
    from tenferro_web.layout import dense_layout
    from tenferro_web.lowering.gemm import GPU_TILES, gemm_spec
    from tenferro_web.lowering.profile import AdapterProfile
    from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general

    def spec(cpu, m, k, n, dtype=DType.F32, workgroup_bytes=16384):
        plan = plan_dot_general(dtype, dense_layout((m, k)), dtype, dense_layout((k, n)),
                                DotGeneralConfig.of([1], [0]))
        return gemm_spec(AdapterProfile(cpu, max_workgroup_bytes=workgroup_bytes), plan)

    big_cpu = spec(True, 1024, 1024, 1024)
    assert big_cpu.key.name == "gemm_blocked" and dict(big_cpu.key.constants)["TM"] == "16"
    assert big_cpu.groups == (1024 // 128) * (1024 // 64)
    assert spec(True, 3, 5, 1).key.name == "gemm_blocked"
    # Small products get small blocks: a 16x8 block compiles in 423 ms on SwiftShader, 4x4 64 ms.
    small_cpu = dict(spec(True, 64, 64, 64).key.constants)
    assert (small_cpu["TM"], small_cpu["TN"]) == ("4", "4")
    assert dict(spec(True, 256, 256, 256).key.constants)["TM"] == "16"
    gpu = spec(False, 4096, 64, 4096)
    assert gpu.key.name == "gemm_tiled" and dict(gpu.key.constants)["B_K_FAST"] == "true"
    assert dict(gpu.key.constants)["TM"] == "8"
    assert dict(gpu.key.constants)["VEC_A"] == "true"
    small = dict(spec(False, 256, 64, 256).key.constants)  # few tiles: 64x64, 16-byte loads
    assert (small["TM"], small["VEC_A"], small["VEC_B"]) == ("4", "true", "true")
    odd = dict(spec(False, 254, 64, 256).key.constants)  # A's columns start unaligned
    assert (odd["VEC_A"], odd["VEC_B"]) == ("false", "true")
    odd = dict(spec(False, 256, 63, 256).key.constants)  # B's columns start unaligned
    assert (odd["VEC_A"], odd["VEC_B"]) == ("true", "false")
    assert spec(False, 256, 64, 8).key.name == "gemm_blocked"  # thin output
    wide = dict(spec(False, 32768, 64, 128).key.constants)  # 256 whole tiles of 128 x 128
    assert wide["TM"] == "8"
    narrow = dict(spec(False, 65536, 64, 64).key.constants)  # 128-wide tiles would be half empty
    assert narrow["TM"] == "4"
    assert dict(spec(False, 256, 64, 256, DType.C32).key.constants)["SCALAR"] == "c32"
    # The first preferred tile shape that fits the device's workgroup memory.
    for dtype in (DType.F32, DType.C32):
        for limit in (16384, 32768, 49152):
            for m in (256, 4096):
                chosen = spec(False, m, 64, m, dtype, limit)
                size = chosen.buffers * chosen.bk * 16 * (chosen.tm + chosen.tn) * dtype.itemsize
                assert size <= limit
                fitting = [t for t in GPU_TILES[chosen.scalar, m == 4096]
                           if t.workgroup_bytes(dtype.itemsize) <= limit]
                assert (chosen.tm, chosen.tn, chosen.bk, chosen.buffers) == \
                    (fitting[0].tm, fitting[0].tn, fitting[0].bk, fitting[0].buffers)
    with pytest.raises(tw.InvalidArgument, match="kernels"):
        AdapterProfile.of(True, {}, "fast")


def test_split_k_only_for_small_outputs_with_long_contractions():
    from tenferro_web.dtypes import DType
    from tenferro_web.layout import dense_layout
    from tenferro_web.lowering.gemm import gemm_spec, split_k_chunks
    from tenferro_web.lowering.profile import AdapterProfile
    from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general

    def plan(m, k, n):
        return plan_dot_general(DType.F32, dense_layout((m, k)), DType.F32, dense_layout((k, n)),
                                DotGeneralConfig.of([1], [0]))

    assert split_k_chunks(plan(1, 100_000, 1)) == (92, 1088)
    assert split_k_chunks(plan(1024, 100_000, 1024)) == (1, 0)  # big output: enough parallelism
    assert split_k_chunks(plan(1, 1000, 1)) == (1, 0)            # short contraction
    p = plan(2, 10_000, 3)
    s = gemm_spec(AdapterProfile(True), p)
    assert (s.k, s.k_total, s.k_step, s.batch) == (1152, 10_000, 1152, 9)
    assert s.a.step == 1152 * 2  # chunks step along A's contraction stride
    assert sum(s.job_k(j) for j in range(s.batch)) == 10_000


def test_split_k_fills_a_gpu_where_the_output_gives_few_workgroups():
    from tenferro_web.dtypes import DType
    from tenferro_web.layout import dense_layout
    from tenferro_web.lowering.gemm import SPLIT_FILL_GROUPS, gemm_spec
    from tenferro_web.lowering.profile import AdapterProfile
    from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general

    def spec(m, k, n, cpu=False):
        p = plan_dot_general(DType.F32, dense_layout((m, k)), DType.F32, dense_layout((k, n)),
                             DotGeneralConfig.of([1], [0]))
        return gemm_spec(AdapterProfile(cpu), p)

    s = spec(256, 4096, 256)  # 16 workgroups of 64 x 64: 16 chunks of 256 make 256
    assert (s.batch, s.k, s.k_total) == (SPLIT_FILL_GROUPS // 16, 256, 4096)
    assert sum(s.job_k(j) for j in range(s.batch)) == 4096
    assert spec(256, 1000, 256).batch == 3          # no chunk shorter than 256 (the last cut)
    assert spec(256, 4096, 256, cpu=True).batch == 1  # CPU adapters: gemm_blocked, no split
    assert spec(1024, 4096, 1024).batch == 1        # 256 workgroups already
    assert spec(256, 300, 256).batch == 1           # too short to split


def test_gpu_small_products_run_gemm_blocked_where_the_setting_asks(monkeypatch):
    from tenferro_web.dtypes import DType
    from tenferro_web.layout import dense_layout
    from tenferro_web.lowering import gemm
    from tenferro_web.lowering.profile import AdapterProfile
    from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general

    def spec(m, k, n, cpu=False):
        p = plan_dot_general(DType.F32, dense_layout((m, k)), DType.F32, dense_layout((k, n)),
                             DotGeneralConfig.of([1], [0]))
        s = gemm.gemm_spec(AdapterProfile(cpu), p)
        return s.key.name, s.tm, s.tn, s.groups

    assert spec(64, 64, 64) == ("gemm_tiled", 4, 4, 1)  # the default: gemm_tiled always
    monkeypatch.setattr(gemm, "SMALL_PRODUCT", (4, 2))
    assert spec(64, 64, 64) == ("gemm_blocked", 2, 2, 16)  # one tiled workgroup: below 4
    assert spec(128, 64, 128)[0] == "gemm_tiled"  # four: not below
    assert spec(256, 4096, 256)[0] == "gemm_tiled"  # split-K fills it instead
    assert spec(64, 64, 64, cpu=True)[1:] == (4, 4, 4)  # CPU adapters keep their blocks


def test_grids_spread_over_two_dimensions():
    from tenferro_web.lowering.profile import AdapterProfile

    profile = AdapterProfile(False, max_workgroups_per_dimension=65535)
    assert profile.grid("op", 10) == (10, 1, 1)
    assert profile.grid("op", 70_000) == (65535, 2, 1)
    with pytest.raises(tw.LimitExceeded, match="maxComputeWorkgroupsPerDimension"):
        profile.grid("op", 65535 * 65535 + 1)


def test_every_kernel_variant_renders_to_one_self_contained_module():
    variants = [
        KernelKey.of("copy_strided", ELEM="u32"), KernelKey.of("copy_strided", ELEM="vec2<u32>"),
        KernelKey.of("copy_strided_bytes"),
        KernelKey.of("transpose_tiled", ELEM="u32", ROWS=2, TILES=4),
        KernelKey.of("reduce_chunks", SCALAR="c32"),
        KernelKey.of("gemm_blocked", SCALAR="f32", TM=16, TN=8, WX=8, WY=8),
    ]
    from tenferro_web.dtypes import DType
    from tenferro_web.layout import dense_layout
    from tenferro_web.lowering.gemm import gemm_spec
    from tenferro_web.lowering.profile import AdapterProfile
    from tenferro_web.planning.dot_general_plan import DotGeneralConfig, plan_dot_general

    for dtype, (m, k, n), lc in [(DType.C32, (128, 64, 128), 1), (DType.F32, (4096, 64, 4096), 0),
                                 (DType.F32, (256, 64, 256), 1)]:
        shape = (m, k) if lc == 1 else (k, m)
        plan = plan_dot_general(dtype, dense_layout(shape), dtype, dense_layout((k, n)),
                                DotGeneralConfig.of([lc], [0]))
        variants.append(gemm_spec(AdapterProfile(False), plan).key)
    for key in variants:
        text = render(key)
        assert "#include" not in text and "{{" not in text and "// unroll" not in text
        assert text.count("fn workgroup_index(") == 1, key  # grid.wgsl pasted exactly once
        assert text.count("fn main(") == 1
        # The layout every transport builds: params, then inputs read, the output written.
        *inputs, output = buffer_bindings(text)
        assert inputs and set(inputs) == {"read"} and output == "read_write", key
    with pytest.raises(ValueError, match="params at 0"):
        buffer_bindings(render(variants[0]).replace("@binding(0) var<storage, read> params",
                                                    "@binding(0) var<storage, read> extra"))
    with pytest.raises(ValueError, match="params at 0"):
        buffer_bindings(render(variants[0]).replace("@binding(2)", "@binding(3)"))
