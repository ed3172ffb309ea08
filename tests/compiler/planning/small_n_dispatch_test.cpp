#include "compiler/planning/small_n_dispatch.h"

#include <string>
#include <vector>

#include "tests/test_util.h"

#include "compiler/common/csr.h"
#include "compiler/common/diagnostics.h"
#include "compiler/planning/balanced_pieces.h"
#include "compiler/planning/batch_sizes.h"

namespace spmmc {
namespace {

TEST_CASE("small-n dispatch: half of --n without a measurement", "[planning][small-n]") {
  CHECK(choose_generic_below_n(4096, std::nullopt, std::nullopt).generic_below_n == 2048);
  CHECK(choose_generic_below_n(6272, std::nullopt, 0.5).generic_below_n == 3136);  // one time alone is no measurement
  CHECK(choose_generic_below_n(1, std::nullopt, std::nullopt).generic_below_n == 1);
  CHECK(choose_generic_below_n(3, std::nullopt, std::nullopt).generic_below_n == 1);
  CHECK_THAT(choose_generic_below_n(64, std::nullopt, std::nullopt).why, Catch::Contains("not measured"));
}

TEST_CASE("small-n dispatch: without a measurement, where the unrolled launch fills the SMs", "[planning][small-n]") {
  // Not measured, with the unrolled launch: where its blocks reach 0.7 x the SMs, at most n.
  const SmallNDispatch d = choose_generic_below_n(8192, std::nullopt, std::nullopt, {64, 1024, 132});
  CHECK(d.generic_below_n == 1479);  // ceil(0.7 x 132 x 1024 / 64) = ceil(1478.4)
  CHECK_THAT(d.why, Catch::Contains("64 A-tiles") && Catch::Contains("reach 0.7 x the 132 SMs"));
  CHECK(choose_generic_below_n(8192, std::nullopt, std::nullopt, {33, 1024, 132}).generic_below_n == 2868);  // ceil(2867.2)
  // Above n / 2 too (since 2026-12-06): 32 A-tiles of 1024 columns in a file for n = 4096 fill 0.48 of
  // the SMs at n = 2048, where the generic path ran 1.17x faster on ten such layers.
  CHECK(choose_generic_below_n(4096, std::nullopt, std::nullopt, {32, 1024, 132}).generic_below_n == 2957);
  // At most 16 A-tiles: where they reach 0.5 x the SMs (since 2026-12-06; 0.7 would give 5914).
  const SmallNDispatch few = choose_generic_below_n(8192, std::nullopt, std::nullopt, {16, 1024, 132});
  CHECK(few.generic_below_n == 4224);  // ceil(0.5 x 132 x 1024 / 16)
  CHECK_THAT(few.why, Catch::Contains("16 A-tiles") && Catch::Contains("reach 0.5 x the 132 SMs"));
  CHECK(choose_generic_below_n(8192, std::nullopt, std::nullopt, {17, 1024, 132}).generic_below_n == 5566);  // ceil(5565.7): 0.7
  CHECK(unrolled_fill_at_crossing(16) == 0.5);
  CHECK(unrolled_fill_at_crossing(17) == 0.7);
  // A launch that fills less than 0.5 of the SMs even at n: the generic path below n.
  const SmallNDispatch under = choose_generic_below_n(4096, std::nullopt, std::nullopt, {8, 1024, 132});
  CHECK(under.generic_below_n == 4096);
  CHECK_THAT(under.why, Catch::Contains("at or above the n it is tuned for (4096)"));
  CHECK_THAT(d.why, !Catch::Contains("at or above"));
  CHECK(choose_generic_below_n(8192, std::nullopt, std::nullopt, {64, 1024, 0}).generic_below_n == 4096);   // SMs unknown
  CHECK(choose_generic_below_n(8192, std::nullopt, std::nullopt, {1000000, 32, 132}).generic_below_n == 1);
  CHECK(choose_generic_below_n(6272, 0.0239, 0.0386, {64, 1024, 132}).generic_below_n == 3883);  // measured: the times decide
}

TEST_CASE("small-n dispatch: where the generic kernel's time in proportion to n meets the kernel's", "[planning][small-n]") {
  // Measured on an H100 (mbnet contraction_1x1_5 at n = 6272): 0.0239 ms against 0.0386 ms.
  const SmallNDispatch d = choose_generic_below_n(6272, 0.0239, 0.0386);
  CHECK(d.generic_below_n == 3883);  // floor(6272 x 0.0239 / 0.0386)
  CHECK_THAT(d.why, Catch::Contains("measured at n = 6272") && Catch::Contains("3883"));
  CHECK(choose_generic_below_n(100, 0.01, 1.0).generic_below_n == 1);    // a far faster kernel: at least 1
  CHECK(choose_generic_below_n(100, 2.0, 1.0).generic_below_n == 100);   // a slower one: at most n
  CHECK(choose_generic_below_n(4096, 1.0, 2.0).generic_below_n == 2048);
  CHECK_THROWS_AS(choose_generic_below_n(0, std::nullopt, std::nullopt), InternalError);
  CHECK_THROWS_AS(choose_generic_below_n(64, 0.0, 1.0), InternalError);
}

// A's rows of the given lengths (columns 0, 1, ...; values 1).
Csr rows_of(const std::vector<int32_t>& lengths) {
  Csr a;
  a.rows = static_cast<int32_t>(lengths.size());
  a.cols = 4096;
  a.row_ptr.push_back(0);
  for (const int32_t len : lengths) {
    for (int32_t c = 0; c < len; ++c) a.col_idx.push_back(c), a.values.push_back(1.0f);
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  return a;
}

TEST_CASE("small-n dispatch: the balanced path where a row is longer than its pieces", "[planning][small-n]") {
  SmallNDispatch unrolled;
  unrolled.generic_below_n = 4096;
  // 1 000 rows, one of 200 products, the others of 100 (mean 100.1): the path's end is kBalancedBelowN (512)
  std::vector<int32_t> lengths(1000, 100);
  lengths[3] = 200;
  const Csr long_rows = rows_of(lengths);
  // an unrolled file whose generic path reaches 4096: from n = 4 to 511, pieces of 32
  SmallNDispatch d = choose_balanced_path(unrolled, long_rows, false, false, 132);
  CHECK(d.balanced_from_n == kBalancedFromN);
  CHECK(d.balanced_below_n == kBalancedBelowN);
  CHECK(d.piece_length == kSmallNPieceLength);
  CHECK(d.generic_below_n == 4096);  // the generic path's end is kept
  CHECK_THAT(d.balanced_why, Catch::Contains("rows up to 200 products"));
  // ... no further than the generic path of an unrolled file; the generic family's file to 511
  unrolled.generic_below_n = 64;
  CHECK(choose_balanced_path(unrolled, long_rows, false, false, 132).balanced_below_n == 64);
  CHECK(choose_balanced_path(SmallNDispatch{}, long_rows, true, false, 132).balanced_below_n == kBalancedBelowN);
  // an unrolled file that leaves its generic path at n = 4 or below: none
  unrolled.generic_below_n = 4;
  d = choose_balanced_path(unrolled, long_rows, false, false, 132);
  CHECK(d.balanced_below_n == 0);
  CHECK(d.balanced_from_n == 0);
  CHECK_THAT(d.balanced_why, Catch::Contains("leaves its generic path at n = 4"));
  // rows of at most 32 products (one piece each: a warp per whole row, slower than the generic path)
  d = choose_balanced_path(SmallNDispatch{}, rows_of({32, 1, 0, 32}), true, false, 132);
  CHECK(d.balanced_below_n == 0);
  CHECK_THAT(d.balanced_why, Catch::Contains("no row of A has more than 32 products (the longest 32)"));
  // --batch-invariant
  d = choose_balanced_path(SmallNDispatch{}, long_rows, true, true, 132);
  CHECK(d.balanced_below_n == 0);
  CHECK_THAT(d.balanced_why, Catch::Contains("--batch-invariant"));
}

TEST_CASE("small-n dispatch: the balanced path's one column per lane ends on long, many rows", "[planning][small-n]") {
  // 1 000 rows of about 100 products: odd n (one column per lane) on the generic path from kBalancedV1BelowN
  std::vector<int32_t> lengths(1000, 100);
  lengths[3] = 200;
  SmallNDispatch d = choose_balanced_path(SmallNDispatch{}, rows_of(lengths), true, false, 132);
  CHECK(d.balanced_below_n == kBalancedBelowN);
  CHECK(d.balanced_v1_below_n == kBalancedV1BelowN);
  CHECK_THAT(d.balanced_why, Catch::Contains(fmt::format("from n = {} one column per lane", kBalancedV1BelowN)) &&
                                 Catch::Contains("1000 rows of 100.1 products"));
  // rows of at most 32 products on average, or fewer than kBalancedV1FromRows rows: to the path's end
  d = choose_balanced_path(SmallNDispatch{}, rows_of(std::vector<int32_t>(5000, 32)), true, false, 132);
  CHECK(d.balanced_v1_below_n == d.balanced_below_n);
  CHECK_THAT(d.balanced_why, !Catch::Contains("one column per lane"));
  d = choose_balanced_path(SmallNDispatch{}, rows_of(std::vector<int32_t>(kBalancedV1FromRows - 1, 230)), true, false, 132);
  CHECK(d.balanced_v1_below_n == d.balanced_below_n);
  d = choose_balanced_path(SmallNDispatch{}, rows_of(std::vector<int32_t>(kBalancedV1FromRows, 230)), true, false, 132);
  CHECK(d.balanced_v1_below_n == kBalancedV1BelowN);
  CHECK(d.balanced_below_n == 1025);  // (the few-warps end: the rule holds past kBalancedBelowN too)
  // a path that ends at or below kBalancedV1BelowN keeps it to its end; never below the pairs' end
  SmallNDispatch unrolled;
  unrolled.generic_below_n = 100;
  d = choose_balanced_path(unrolled, rows_of(lengths), false, false, 132);
  CHECK(d.balanced_v1_below_n == 100);
  CHECK(balanced_v1_below_n(rows_of(lengths), 512, 200) == 200);
  CHECK(balanced_v1_below_n(rows_of(lengths), 512, 0) == kBalancedV1BelowN);
  // none without a path
  CHECK(choose_balanced_path(SmallNDispatch{}, rows_of(lengths), true, true, 132).balanced_v1_below_n == 0);
}

TEST_CASE("small-n dispatch: where the balanced path ends", "[planning][small-n]") {
  std::string why;
  // rows of at most 32 products on average: to kBalancedLongestBelowN
  CHECK(balanced_path_below_n(rows_of({10, 33, 0, 85}), 132, why) == kBalancedLongestBelowN);  // mean 32
  CHECK_THAT(why, Catch::Contains("32.0 products on average, at most 32"));
  CHECK(balanced_path_below_n(rows_of(std::vector<int32_t>(5000, 32)), 132, why) == kBalancedLongestBelowN);
  CHECK(balanced_path_below_n(rows_of(std::vector<int32_t>(5000, 33)), 132, why) == kBalancedBelowN);  // many, longer
  CHECK_THAT(why, Catch::Contains("33.0 products on average, 5000 of them"));
  // longer rows: while the generic path's launch (rows x ceil(n / 128) warps) leaves at most 8 warps per SM
  CHECK(balanced_path_below_n(rows_of(std::vector<int32_t>(64, 65)), 132, why) == 2049);  // 128 x floor(1056 / 64) + 1
  CHECK_THAT(why, Catch::Contains("64 rows") && Catch::Contains("up to n = 2048"));
  CHECK(balanced_path_below_n(rows_of(std::vector<int32_t>(128, 230)), 132, why) == 1025);  // 128 x 8 + 1
  CHECK(balanced_path_below_n(rows_of(std::vector<int32_t>(16, 230)), 132, why) == kBalancedLongestBelowN);  // capped
  // ... at least kBalancedBelowN, and kBalancedBelowN where the SMs are unknown
  CHECK(balanced_path_below_n(rows_of(std::vector<int32_t>(256, 230)), 132, why) == 513);  // 128 x 4 + 1
  CHECK(balanced_path_below_n(rows_of(std::vector<int32_t>(512, 230)), 132, why) == kBalancedBelowN);  // 128 x 2 + 1 = 257
  CHECK_THAT(why, Catch::Contains("230.0 products on average, 512 of them"));
  CHECK(balanced_path_below_n(rows_of(std::vector<int32_t>(64, 65)), 0, why) == kBalancedBelowN);
  // the file's end: the generic family's at the rule's end, an unrolled file's no further than its generic path
  CHECK(choose_balanced_path(SmallNDispatch{}, rows_of(std::vector<int32_t>(64, 65)), true, false, 132).balanced_below_n == 2049);
  SmallNDispatch unrolled;
  unrolled.generic_below_n = 1500;
  const SmallNDispatch d = choose_balanced_path(unrolled, rows_of({10, 33, 0, 85}), false, false, 132);
  CHECK(d.balanced_below_n == 1500);
  CHECK_THAT(d.balanced_why, Catch::Contains("to 1499") && Catch::Contains("where the generic path ends"));
}

TEST_CASE("balanced pieces: the cut rule of a row", "[planning][small-n]") {
  CHECK(balanced_row_pieces(0, 32, 16) == 1);
  CHECK(balanced_row_pieces(32, 32, 16) == 1);
  CHECK(balanced_row_pieces(33, 32, 16) == 2);
  CHECK(balanced_row_pieces(64, 32, 16) == 2);
  CHECK(balanced_row_pieces(65, 32, 16) == 3);
  CHECK(balanced_row_pieces(512, 32, 16) == 16);
  CHECK(balanced_row_pieces(int64_t{1} << 40, 32, 16) == 16);
  CHECK(balanced_row_pieces(300, 64, 4) == 4);
  CHECK_THROWS_AS(balanced_row_pieces(10, 0, 16), InternalError);
  CHECK_THROWS_AS(balanced_row_pieces(10, 32, 0), InternalError);
}

TEST_CASE("small-n dispatch: the balanced path's pairs where A cuts into more pieces than a wave of warps", "[planning][small-n]") {
  // pieces: one per row of at most 32 products (empty rows too), ceil(length / 32) per longer row, at most 16
  CHECK(small_n_pieces(rows_of({0, 1, 32, 33, 64, 65, 512, 4000})) == 1 + 1 + 1 + 2 + 2 + 3 + 16 + 16);
  // 4224 pieces: rows of 100 products cut in 4, 1056 of them; one row fewer is below the rule
  const Csr many = rows_of(std::vector<int32_t>(1056, 100));
  REQUIRE(small_n_pieces(many) == kBalancedPairsFromPieces);
  SmallNDispatch d = choose_balanced_path(SmallNDispatch{}, many, true, false, 132);
  CHECK(d.balanced_pairs_below_n == kBalancedPairsBelowN);
  CHECK(d.balanced_below_n == kBalancedBelowN);
  CHECK_THAT(d.balanced_why, Catch::Contains("two pieces per warp below n = 17"));
  CHECK(choose_balanced_path(SmallNDispatch{}, rows_of(std::vector<int32_t>(1055, 100)), true, false, 132).balanced_pairs_below_n == 0);
  // no further than the path: an unrolled file whose generic path ends at 10
  SmallNDispatch unrolled;
  unrolled.generic_below_n = 10;
  CHECK(choose_balanced_path(unrolled, many, false, false, 132).balanced_pairs_below_n == 10);
  // none without the path
  d = choose_balanced_path(SmallNDispatch{}, many, true, true, 132);
  CHECK(d.balanced_below_n == 0);
  CHECK(d.balanced_pairs_below_n == 0);
}

TEST_CASE("small-n dispatch: the balanced path's second table where A's rows are uneven", "[planning][small-n]") {
  // 600 rows of 48 products and every 20th of 200: mean 55.6, the longest 3.6 times it; the path ends at 512
  // (more than 8 warps per SM from there), the second table runs 512-1023 with pieces of 56.
  std::vector<int32_t> lengths(600, 48);
  for (size_t r = 0; r < lengths.size(); r += 20) lengths[r] = 200;
  const Csr uneven = rows_of(lengths);
  SmallNDispatch d = choose_balanced_mid_path(choose_balanced_path(SmallNDispatch{}, uneven, true, false, 132), uneven, true);
  CHECK(d.balanced_below_n == kBalancedBelowN);
  CHECK(d.balanced_mid_from_n == kBalancedBelowN);
  CHECK(d.balanced_mid_below_n == kBalancedMidBelowN);
  CHECK(d.mid_piece_length == 56);  // ceil(33360 / 600)
  CHECK(balanced_mid_piece_length(uneven) == 56);
  CHECK_THAT(d.balanced_mid_why, Catch::Contains("pieces of 56 for n = 512 to 1023"));
  // an unrolled file: no further than its generic path, none where that ends at the path's end
  SmallNDispatch unrolled;
  unrolled.generic_below_n = 800;
  d = choose_balanced_mid_path(choose_balanced_path(unrolled, uneven, false, false, 132), uneven, false);
  CHECK(d.balanced_mid_below_n == 800);
  unrolled.generic_below_n = 300;
  d = choose_balanced_mid_path(choose_balanced_path(unrolled, uneven, false, false, 132), uneven, false);
  CHECK(d.balanced_mid_below_n == 0);
  // where the generic path takes its blocks of 32 warps (codegen/generic_launch.h's generic_warp_wide_from_n):
  // no further than where they start, none where they start at the path's end
  d = choose_balanced_mid_path(choose_balanced_path(SmallNDispatch{}, uneven, true, false, 132), uneven, true, 897);
  CHECK(d.balanced_mid_below_n == 897);
  d = choose_balanced_mid_path(choose_balanced_path(SmallNDispatch{}, uneven, true, false, 132), uneven, true, 2049);
  CHECK(d.balanced_mid_below_n == kBalancedMidBelowN);
  d = choose_balanced_mid_path(choose_balanced_path(SmallNDispatch{}, uneven, true, false, 132), uneven, true, 512);
  CHECK(d.balanced_mid_below_n == 0);
  CHECK_THAT(d.balanced_mid_why, Catch::Contains("the generic path's blocks of 32 warps start"));
  // rows at most twice the mean: none
  const Csr even = rows_of(std::vector<int32_t>(600, 48));
  d = choose_balanced_mid_path(choose_balanced_path(SmallNDispatch{}, even, true, false, 132), even, true);
  CHECK(d.balanced_below_n == kBalancedBelowN);
  CHECK(d.balanced_mid_below_n == 0);
  CHECK_THAT(d.balanced_mid_why, Catch::Contains("less than 2 x the mean"));
  // short rows (the path reaches 4096), few rows (it reaches past 1023), --batch-invariant (no path): none
  std::vector<int32_t> short_rows(600, 20);
  short_rows[0] = 100;
  d = choose_balanced_mid_path(choose_balanced_path(SmallNDispatch{}, rows_of(short_rows), true, false, 132), rows_of(short_rows), true);
  CHECK(d.balanced_below_n == kBalancedLongestBelowN);
  CHECK(d.balanced_mid_below_n == 0);
  std::vector<int32_t> few(64, 48);
  few[0] = 200;
  d = choose_balanced_mid_path(choose_balanced_path(SmallNDispatch{}, rows_of(few), true, false, 132), rows_of(few), true);
  CHECK(d.balanced_below_n > kBalancedMidBelowN);
  CHECK(d.balanced_mid_below_n == 0);
  d = choose_balanced_mid_path(choose_balanced_path(SmallNDispatch{}, uneven, true, true, 132), uneven, true);
  CHECK(d.balanced_mid_below_n == 0);
  CHECK(d.balanced_mid_why == "no balanced path");
}

TEST_CASE("batch sizes: one n, a list or a range, the file tuned for the largest", "[small-n]") {
  std::string error;
  auto sizes = parse_batch_sizes("4096", kMaxIndex, error);
  REQUIRE(sizes);
  CHECK(sizes->points == std::vector<int64_t>{4096});
  CHECK(sizes->tune_n == 4096);
  CHECK_FALSE(sizes->several());
  sizes = parse_batch_sizes("512,1,32,32", kMaxIndex, error);  // any order, repeats merged
  REQUIRE(sizes);
  CHECK(sizes->points == std::vector<int64_t>{1, 32, 512});
  CHECK(sizes->tune_n == 512);
  CHECK(sizes->label() == "1,32,512");
  sizes = parse_batch_sizes("1:8192", kMaxIndex, error);  // HI, HI / 4, ... above LO, and LO
  REQUIRE(sizes);
  CHECK(sizes->points == std::vector<int64_t>{1, 2, 8, 32, 128, 512, 2048, 8192});
  CHECK(sizes->tune_n == 8192);
  sizes = parse_batch_sizes("17:256", kMaxIndex, error);
  REQUIRE(sizes);
  CHECK(sizes->points == std::vector<int64_t>{17, 64, 256});
  sizes = parse_batch_sizes("64:64", kMaxIndex, error);
  REQUIRE(sizes);
  CHECK(sizes->points == std::vector<int64_t>{64});
  for (const char* bad : {"", "0", "-4", "4x", "1,,2", ",4", "4,", "8:1", "0:8", "1:", ":8", "1:2:3", "1,2:8", "99999999999"}) {
    INFO(bad);
    error.clear();
    CHECK_FALSE(parse_batch_sizes(bad, kMaxIndex, error));
    CHECK_THAT(error, Catch::Contains("expected N, N1,N2,... or LO:HI"));
  }
  CHECK_FALSE(parse_batch_sizes("100", 99, error));  // above the largest n
}

TEST_CASE("small-n dispatch over several batch sizes: from the measured crossing", "[small-n]") {
  // The kernel from the first size of the suffix where it is at least as fast; between that size and
  // the one before, where the two times, linear in n, meet.
  SmallNDispatch d = choose_generic_below_n(
      std::vector<BatchSizeTime>{{8, 0.030, 0.010}, {128, 0.030, 0.020}, {512, 0.030, 0.040}, {2048, 0.035, 0.120}});
  // Between 128 (gap +0.010) and 512 (gap -0.010): 128 + 384 x 0.5 = 320.
  CHECK(d.generic_below_n == 320);
  CHECK_THAT(d.why, Catch::Contains("n = 128: 0.0300 / 0.0200 ms"));
  CHECK_THAT(d.why, Catch::Contains("meet at n = 320"));
  // A win at a small size that does not last is not taken: the suffix decides.
  d = choose_generic_below_n(std::vector<BatchSizeTime>{{1, 0.010, 0.020}, {32, 0.030, 0.020}, {4096, 0.030, 0.200}});
  CHECK(d.generic_below_n == 258);  // 32 + 4064 x 0.010 / 0.180, rounded up
  // The kernel as fast from the smallest size: below it the one-size rule (floor(8 x 0.01 / 0.02) = 4).
  d = choose_generic_below_n(std::vector<BatchSizeTime>{{8, 0.010, 0.020}, {64, 0.010, 0.050}});
  CHECK(d.generic_below_n == 4);
  CHECK_THAT(d.why, Catch::Contains("from the smallest size on"));
  // The generic kernel faster everywhere: the kernel only above the largest size.
  d = choose_generic_below_n(std::vector<BatchSizeTime>{{8, 0.05, 0.01}, {64, 0.05, 0.02}});
  CHECK(d.generic_below_n == 65);
  // One size: the one-size rule.
  CHECK(choose_generic_below_n(std::vector<BatchSizeTime>{{6272, 0.0239, 0.0386}}).generic_below_n == 3883);
  // Not ascending, empty, or a time that is not positive: a bug of the caller.
  CHECK_THROWS_AS(choose_generic_below_n(std::vector<BatchSizeTime>{}), InternalError);
  CHECK_THROWS_AS(choose_generic_below_n(std::vector<BatchSizeTime>{{64, 0.1, 0.1}, {8, 0.1, 0.1}}), InternalError);
  CHECK_THROWS_AS(choose_generic_below_n(std::vector<BatchSizeTime>{{8, 0.0, 0.1}, {64, 0.1, 0.1}}), InternalError);
}

}  // namespace
}  // namespace spmmc
