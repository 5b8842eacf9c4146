// The question cases Q18-Q26 (question_cases.cpp has the others and says what they are for).
#include "question_common.hpp"

namespace tmakit::gpu_tools::questions {

void q18() {
  TensorMap m = tiled(DataType::uint32, {32, 4}, {128}, {32, 4});
  {
    ScenarioJson s(2048);
    s.add_global("A", 512, {{"random", 1801}});
    s.add_map("map0", m, "A");
    s.add_shared_init(0, 1024, 512, {{"random", 1802}});
    s.sym("smem", "shared:1024");
    const std::string op = tensor_operand(s, "map0", {0, 0});
    s.step("fence.proxy.async.shared::cta;");
    for (int k = 0; k < 4; ++k) s.step("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group " + op + ", [smem];");
    s.step("cp.async.bulk.commit_group;");
    s.step("cp.async.bulk.wait_group 0;");
    s.out_global("A", "A");
    add("q18_four_reductions_one_group", "Q18", "four .add reductions of one box in one bulk group (per-element atomicity)", s);
  }
  {
    ScenarioJson s(2048, 4);
    s.add_global("A", 512, {{"random", 1803}});
    s.add_map("map0", m, "A");
    for (int k = 0; k < 4; ++k) s.add_shared_init(k, 1024, 512, {{"random", 1804 + k}});
    s.sym("smem", "shared:1024");
    const std::string op = tensor_operand(s, "map0", {0, 0});
    for (int k = 0; k < 4; ++k) s.step(k, 0, "fence.proxy.async.shared::cta;");
    for (int k = 0; k < 4; ++k) s.step(k, 0, "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group " + op + ", [smem];");
    for (int k = 0; k < 4; ++k) s.step(k, 0, "cp.async.bulk.commit_group;");
    for (int k = 0; k < 4; ++k) s.step(k, 0, "cp.async.bulk.wait_group 0;");
    s.out_global("A", "A");
    add("q18_four_ctas", "Q18", "four CTAs reduce (.add) into the same box at once", s);
  }
}

// Q19: im2col details the random vectors leave to chance.
void q19() {
  // PTX-T 5.5.4 example 2 read as (c, w, h, n): W = 9, corners 0 / -2, w = 7 lies past X - 1 + upper = 6.
  TensorMap ex2 = im2col(DataType::float32, {4, 9, 9, 1}, {0, 0}, {-2, -2}, 4, 16);
  add("q19_base_past_upper", "Q19", "filter base one past X - 1 + upper (PTX-T 5.5.4 example 2 read as c, w, h, n)",
      one_load(ex2, {0, 7, 4, 0}, {{"random", 1901}}, 1902, 0, "{0, 0}"));
  add("q19_base_below_lower", "Q19", "filter base one below the lower corner",
      one_load(im2col(DataType::float32, {4, 8, 1}, {-1}, {-1}, 4, 8), {0, -2, 0}, {{"random", 1903}}, 1904, 0, "{0}"));
  // The traversal-stride example: W = 8, corners -1 / -1, stride 2, start w = 7 (past 6).
  add("q19_stride_example", "Q19", "traversal stride 2, start w = 7 past X - 1 + upper = 6 (PTX-T 5.5.4 stride example)",
      one_load(im2col(DataType::float32, {4, 8, 8, 1}, {-1, -1}, {-1, -1}, 4, 12, OobFill::zero, {1, 2, 2, 1}),
               {0, 7, 7, 0}, {{"random", 1905}}, 1906, 0, "{0, 0}"));
  add("q19_off_lattice", "Q19", "stride 2 on W, base 0 off the lattice -1, 1, 3, ...",
      one_load(im2col(DataType::float32, {4, 8, 3, 1}, {-1, 0}, {0, 0}, 4, 14, OobFill::zero, {1, 2, 1, 1}),
               {0, 0, 0, 0}, {{"random", 1907}}, 1908, 0, "{0, 0}"));
  TensorMap ch = im2col(DataType::float16, {20, 4, 2}, {0}, {0}, 32, 6, OobFill::nan_request_zero_fma);
  add("q19_channels_past_c", "Q19", "channel range c .. c + 31 past C = 20 (NaN fill)",
      one_load(ch, {16, 0, 0}, {{"random", 1909}}, 1910, 0, "{1}"));
  add("q19_channel_negative", "Q19", "channel start -8: channels below 0",
      one_load(ch, {-8, 1, 0}, {{"random", 1911}}, 1912, 0, "{0}"));
  add("q19_channel_misaligned", "Q19", "channel start 4 (8 bytes): not on a 16-byte granule",
      one_load(ch, {4, 0, 0}, {{"random", 1913}}, 1914, 0, "{0}"));
  add("q19_rank5_d_wrap", "Q19", "rank 5: the walk wraps D and carries into n",
      one_load(im2col(DataType::uint8, {16, 2, 2, 3, 2}, {0, 0, 0}, {0, 0, -1}, 16, 20), {0, 1, 0, 1, 0},
               {{"random", 1915}}, 1916, 0, "{0, 0, 1}"));
  TensorMap il = im2col(DataType::uint16, {8, 4, 4, 1}, {0, 0}, {0, 0}, 8, 8);
  il.interleave = tensor_map::Interleave::b16;
  add("q19_interleave16", "Q19", "interleave 16B im2col map", one_load(il, {0, 0, 0, 0}, {{"random", 1917}}, 1918, 0, "{0, 0}"));
}

// Q20: .im2col_no_offs stores and reductions: a small walk that wraps W and H and crosses n.
void q20() {
  TensorMap m = im2col(DataType::uint32, {4, 4, 3, 2}, {1, 0}, {0, -1}, 4, 10);
  add("q20_store_walk", "Q20", ".im2col_no_offs store: W in [1, 3], H in [0, 1], crossing into n = 1",
      one_write(m, {0, 2, 1, 0}, "", {{"random", 2001}}, {{"random", 2002}}));
  add("q20_reduce_walk", "Q20", ".im2col_no_offs .add reduction, the same walk, running past N",
      one_write(m, {0, 1, 0, 1}, "add", {{"random", 2003}}, {{"random", 2004}}));
  add("q20_store_negative_n", "Q20", ".im2col_no_offs store starting at n = -1 (H14 for im2col?)",
      one_write(m, {0, 2, 1, -1}, "", {{"random", 2005}}, {{"random", 2006}}));
  TensorMap out = im2col(DataType::uint32, {4, 4, 3, 2}, {-1, 0}, {0, 0}, 4, 10);
  add("q20_store_box_outside", "Q20", ".im2col_no_offs store with lower corner -1 (§4.3 wants the box inside)",
      one_write(out, {0, 0, 0, 0}, "", {{"random", 2007}}, {{"random", 2008}}));
  // H9 for im2col stores: a channel start 8 bytes off the 16-byte grid (loads fault, Q19).
  TensorMap ch = im2col(DataType::uint8, {32, 4, 2, 1}, {0, 0}, {0, 0}, 16, 4);
  add("q20x_store_channel_8", "Q20", ".im2col_no_offs store starting at channel 8 of uint8 (H9 for stores?)",
      one_write(ch, {8, 0, 0, 0}, "", {{"random", 2009}}, {{"random", 2010}}));
}

// Q21: prefetches of nonsense: huge or misaligned coordinates, an unmapped tensor.
void q21() {
  TensorMap m = tiled(DataType::uint8, {64, 4}, {64}, {32, 2});
  auto with_prefetch = [&](const std::string& id, const std::string& title, const std::string& pf, TensorMap* bad) {
    ScenarioJson s = one_load(m, {16, 1}, {{"random", 2101}}, 2102);
    json j = s.json();
    if (bad) j["tensor_maps"]["bad"] = map_json(*bad);
    j["program"].insert(j["program"].begin(), pf);
    g_out.push_back({id, "Q21", title, j});
  };
  with_prefetch("q21_prefetch_huge_coords", "tile prefetch at (2^31 - 16, -2^31), then a load",
                "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [map0, {2147483632, -2147483648}];", nullptr);
  with_prefetch("q21_prefetch_misaligned", "tile prefetch with c[0] x elemBytes = 3 (H9 faults loads)",
                "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [map0, {3, 0}];", nullptr);
  TensorMap unmapped = m;
  unmapped.global_address = 0x7f0000000000ull;  // no allocation there
  with_prefetch("q21_prefetch_unmapped", "tile prefetch of a map whose tensor is not mapped",
                "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [bad, {0, 0}];", &unmapped);
  with_prefetch("q21_bulk_prefetch_unmapped", "cp.async.bulk.prefetch.L2 of an unmapped range",
                "cp.async.bulk.prefetch.L2.global [0x7f0000000000], 4096;", nullptr);
  TensorMap i2c = im2col(DataType::uint8, {16, 8, 1}, {0}, {0}, 16, 4);
  with_prefetch("q21_prefetch_im2col_outside_box", "im2col prefetch with the filter base outside the box",
                "cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [bad, {0, 100, 0}], {0};", &i2c);
  g_out.back().scenario["tensor_maps"]["bad"] = map_json(i2c, "A", 0);
}

// Q22: bulk copies of size 0, and one larger than the CTA's shared memory.
void q22() {
  {
    ScenarioJson s(2048);
    s.add_global("A", 256, {{"random", 2201}});
    s.add_shared_init(0, 1024, 256, {{"random", 2202}});
    s.sym("smem", "shared:1024");
    s.sym("gaddr", "global:A+64");
    s.sym("mbar", "shared:0");
    s.sym("flags", "shared:64");
    s.step("mbarrier.init.shared::cta.b64 [mbar], 1;");
    s.step("fence.mbarrier_init.release.cluster;");
    s.step("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [smem], [gaddr], 0, [mbar];");
    s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], 0;");
    s.step("mbarrier.try_wait.parity.shared::cta.b64 p, [mbar], 0;");
    s.step("fence.proxy.async.shared::cta;");
    s.step("cp.async.bulk.global.shared::cta.bulk_group [gaddr], [smem], 0;");
    s.step("cp.async.bulk.commit_group;");
    s.step("cp.async.bulk.wait_group 0;");
    s.step("@p st.shared.b32 [flags], 1;");
    s.out_shared("shared", 0, 64, 1216);
    s.out_global("A", "A");
    add("q22_size0", "Q22", "cp.async.bulk load and store of 0 bytes", s);
  }
  {
    ScenarioJson s(4096);
    s.add_global("A", 262144, {{"random", 2203}});
    s.sym("smem", "shared:1024");
    s.sym("gaddr", "global:A");
    s.sym("mbar", "shared:0");
    load_steps(s, "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [smem], [gaddr], 262144, [mbar];", 262144);
    s.out_shared("shared", 0, 1024, 1024);
    add("q22_past_shared", "Q22", "a 256 KiB bulk load into a CTA with 4 KiB of shared memory", s);
  }
}

// Q24: overlapping global addresses in one store: stride 0 and a stride smaller than the row.
void q24() {
  add("q24_store_stride0", "Q24", "tile store whose 4 rows all map to the same 32 bytes (stride 0)",
      one_write(tiled(DataType::uint32, {8, 4}, {0}, {8, 4}), {0, 0}, "", {{"random", 2401}}, {{"random", 2402}}, 64));
  add("q24_store_overlap", "Q24", "tile store of 64-byte rows at a 16-byte stride",
      one_write(tiled(DataType::uint8, {64, 4}, {16}, {64, 4}), {0, 0}, "", {{"random", 2403}}, {{"random", 2404}}, 128));
  add("q24_reduce_stride0", "Q24", "tile .add reduction whose 4 rows hit the same elements",
      one_write(tiled(DataType::uint32, {8, 4}, {0}, {8, 4}), {0, 0}, "add", {{"random", 2405}}, {{"random", 2406}}, 64));
  add("q24_load_stride0", "Q24", "tile load of 4 rows at stride 0",
      one_load(tiled(DataType::uint32, {8, 4}, {0}, {8, 4}), {0, 0}, {{"random", 2407}}, 2408, 0, "", 64));
}

// Q25: does wait_group(.read) wait for an mbarrier-completed tensor load?
void q25() {
  for (bool read : {true, false}) {
    TensorMap m = tiled(DataType::uint8, {256, 128}, {256}, {256, 128});  // 32 KiB: long enough to be in flight
    ScenarioJson s(1024 + 32768);
    s.add_global("A", 32768, {{"random", 2501}});
    s.add_map("map0", m, "A");
    s.sym("smem", "shared:1024");
    s.sym("mbar", "shared:0");
    s.sym("flags", "shared:64");
    s.step("mbarrier.init.shared::cta.b64 [mbar], 1;");
    s.step("fence.mbarrier_init.release.cluster;");
    s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], 32768;");
    s.step("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [smem], " +
           tensor_operand(s, "map0", {0, 0}) + ", [mbar];");
    s.step("cp.async.bulk.commit_group;");
    s.step(std::string("cp.async.bulk.wait_group") + (read ? ".read" : "") + " 0;");
    s.step("mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 0;");  // done already?
    s.step("@p st.shared.b32 [flags], 1;");
    s.step("@!p st.shared.b32 [flags], 2;");
    s.step("mbarrier.try_wait.parity.shared::cta.b64 q, [mbar], 0;");
    s.out_shared("flags", 0, 64, 16);
    add(std::string("q25_") + (read ? "wait_group_read" : "wait_group") + "_after_load", "Q25",
        std::string("a 32 KiB tensor load, commit_group, wait_group") + (read ? ".read" : "") +
            " 0, then test_wait: 1 = the load had completed, 2 = still in flight",
        s);
  }
  // The same with a 192 KiB box, and the control without commit/wait (is a load still in
  // flight when the next step runs?).
  for (int wait : {0, 1, 2}) {  // 0 none, 1 wait_group.read, 2 wait_group
    for (bool big : {false, true}) {
      if (!big && wait != 0) continue;
      const uint32_t planes = big ? 3 : 1, rows = big ? 256 : 128, bytes = 256 * rows * planes;
      TensorMap m = tiled(DataType::uint8, {256, rows, planes}, {256, 256ull * rows}, {256, rows, planes});
      ScenarioJson s(1024 + bytes);
      s.add_global("A", bytes, {{"random", 2510}});
      s.add_map("map0", m, "A");
      s.sym("smem", "shared:1024");
      s.sym("mbar", "shared:0");
      s.sym("flags", "shared:64");
      s.step("mbarrier.init.shared::cta.b64 [mbar], 1;");
      s.step("fence.mbarrier_init.release.cluster;");
      s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(bytes) + ";");
      s.step("cp.async.bulk.tensor.3d.shared::cta.global.tile.mbarrier::complete_tx::bytes [smem], " +
             tensor_operand(s, "map0", {0, 0, 0}) + ", [mbar];");
      if (wait) {
        s.step("cp.async.bulk.commit_group;");
        s.step(std::string("cp.async.bulk.wait_group") + (wait == 1 ? ".read" : "") + " 0;");
      }
      s.step("mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 0;");
      s.step("@p st.shared.b32 [flags], 1;");
      s.step("@!p st.shared.b32 [flags], 2;");
      s.step("mbarrier.try_wait.parity.shared::cta.b64 q, [mbar], 0;");
      s.out_shared("flags", 0, 64, 16);
      const std::string what = wait == 0 ? "no_wait" : wait == 1 ? "wait_group_read" : "wait_group";
      add("q25_" + std::string(big ? "192k_" : "32k_") + what, "Q25",
          std::to_string(bytes / 1024) + " KiB tensor load, " + (wait ? "commit_group, " + what + " 0, " : "") +
              "then test_wait: 1 = completed, 2 = in flight",
          s);
    }
  }
}

// Q26: interleaved tiled loads.
void q26() {
  // Interleaved TILED loads (docs/hardware-notes.md "interleave decisions", settled by the
  // probe tools/gpu/probe_interleave.cu): an element of dimension 0 is a whole 16/32-byte
  // slice (dims[0], c[0], box[0] and elementStrides[0] count slices), dimension rank-2 is
  // walked once, slices land densely, complete_tx = slices × slice bytes. The tensor is
  // given room for every slice the walk can reach (`room`): the first recording's
  // allocations ended after dims[0] × elemBytes and the 32B load read past them.
  auto room = [](const TensorMap& m) {
    uint64_t last = m.dims[0] * m.slice_bytes();
    for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
    return (last + 31) / 32 * 32 + 64;
  };
  TensorMap a = tiled(DataType::uint16, {8, 6, 3}, {16, 96}, {8, 4, 2});
  a.interleave = tensor_map::Interleave::b16;
  add("q26_interleave16", "Q26", "interleave 16B tiled load: 8 slices of 16 bytes per row, dimension 1 walked once",
      one_load(a, {0, 1, 1}, {{"random", 2601}}, 2602, 0, "", room(a)));
  {  // armed with 128 bytes more than the 256 the load delivers: the phase never completes
    ScenarioJson over = one_load(a, {0, 1, 1}, {{"random", 2601}}, 2602, 0, "", room(a));
    json j = over.json();
    j["program"][2] = "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], 384;";
    g_out.push_back({"q26_interleave16_armed_384", "Q26", "interleave 16B load armed with 384 bytes (it delivers 256)", j});
  }
  TensorMap b = tiled(DataType::uint8, {32, 5, 3}, {32, 160}, {32, 4, 2}, Swizzle::b32);
  b.interleave = tensor_map::Interleave::b32;
  b.element_strides[0] = 2;
  add("q26_interleave32_es0", "Q26", "interleave 32B tiled load with elementStrides[0] = 2 (every other slice)",
      one_load(b, {0, 2, 1}, {{"random", 2603}}, 2604, 0, "", room(b)));
  b.element_strides[0] = 1;
  add("q26_interleave32", "Q26", "interleave 32B tiled load: 32 slices of 32 bytes per row",
      one_load(b, {0, 2, 1}, {{"random", 2605}}, 2606, 0, "", room(b)));
  add("q26_interleave32_past_allocation", "Q26",
      "interleave 32B load whose slices run past the allocation (sized for dims[0] × elemBytes)",
      one_load(b, {0, 2, 1}, {{"random", 2605}}, 2606));
  TensorMap r4 = tiled(DataType::uint32, {4, 5, 6, 7}, {64, 512, 4096}, {4, 3, 2, 5});
  r4.interleave = tensor_map::Interleave::b16;
  add("q26_rank4_walk_once", "Q26", "rank 4, box {4, 3, 2, 5}: dimension 2 walked once",
      one_load(r4, {0, 1, 1, 1}, {{"random", 2621}}, 2622, 0, "", room(r4)));
  TensorMap r5 = tiled(DataType::uint32, {4, 3, 4, 5, 3}, {64, 256, 2048, 16384}, {4, 2, 3, 2, 3});
  r5.interleave = tensor_map::Interleave::b16;
  add("q26_rank5_walk_once_oob", "Q26", "rank 5: dimension 3 walked once, out of bounds in dimension 4",
      one_load(r5, {0, 0, 1, 1, 2}, {{"random", 2623}}, 2624, 0, "", room(r5)));
  TensorMap d = tiled(DataType::uint32, {4, 16, 5}, {64, 1024}, {4, 8, 2}, Swizzle::b128);
  d.interleave = tensor_map::Interleave::b16;
  add("q26_s128_dense_rows", "Q26", "64-byte interleaved rows under 128B swizzle lie 64 bytes apart (no H2 padding)",
      one_load(d, {1, 0, 0}, {{"random", 2625}}, 2626, 128, "", room(d)));
  TensorMap f = tiled(DataType::float16, {8, 6, 5}, {128, 1024}, {8, 2, 2}, Swizzle::none, OobFill::nan_request_zero_fma);
  f.interleave = tensor_map::Interleave::b16;
  add("q26_nan_fill_c0_negative", "Q26", "float16, NaN fill, c[0] = -2 slices, dimension 2 out of bounds",
      one_load(f, {-2, 1, 4}, {{"random", 2627}}, 2628, 0, "", room(f)));
  TensorMap t = tiled(DataType::tfloat32, {8, 6, 5}, {256, 2048}, {8, 2, 2}, Swizzle::b32);
  t.interleave = tensor_map::Interleave::b32;
  add("q26_tf32_interleave32", "Q26", "tfloat32, interleave 32B: the tf32 rounding of every element of each slice",
      one_load(t, {1, 1, 1}, {{"random", 2629}}, 2630, 0, "", room(t)));
  // Stores and reductions with the same geometry (the probe measured loads only).
  TensorMap w = tiled(DataType::uint32, {6, 5, 4}, {96, 512}, {4, 2, 2});
  w.interleave = tensor_map::Interleave::b16;
  add("q26_store_interleave16", "Q26", "interleave 16B tile store: slices back to their addresses, OOB slices dropped",
      one_write(w, {3, 1, 2}, "", {{"random", 2631}}, {{"random", 2632}}, room(w)));
  add("q26_reduce_interleave16", "Q26", "interleave 16B tile reduction (.add, uint32)",
      one_write(w, {1, 2, 1}, "add", {{"random", 2633}}, {{"random", 2634}}, room(w)));
  // im2col with interleave: C beyond one slice.
  TensorMap i16 = im2col(DataType::uint16, {16, 4, 4, 1}, {0, 0}, {0, 0}, 8, 8);
  i16.interleave = tensor_map::Interleave::b16;
  add("q26_im2col_interleave16_c16", "Q26", "interleave 16B im2col map, C = 16 uint16 (two slices), 8 channels per pixel",
      one_load(i16, {8, 0, 0, 0}, {{"random", 2611}}, 2612, 0, "{1, 0}"));
  TensorMap i32 = im2col(DataType::uint8, {32, 4, 2, 2}, {0, 0}, {0, 0}, 32, 6);
  i32.interleave = tensor_map::Interleave::b32;
  i32.swizzle = Swizzle::b32;
  add("q26_im2col_interleave32", "Q26", "interleave 32B im2col map, 32 uint8 channels",
      one_load(i32, {0, 1, 1, 0}, {{"random", 2613}}, 2614, 0, "{0, 0}"));
}

}  // namespace tmakit::gpu_tools::questions
