#include "compiler/common/sha256.h"

#include "tests/test_util.h"

namespace spmmc {
namespace {

TEST_CASE("sha256: FIPS 180-4 test vectors", "[sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: the weights hash sees every part of A", "[sha256]") {
  const Csr a = test::csr_from_dense(2, 3, {1, 0, 2, 0, 3, 0});
  const std::string h = weights_sha256(a);
  CHECK(h.size() == 64);
  CHECK(weights_sha256(a) == h);
  Csr value = a;
  value.values[1] = 2.0000002f;
  CHECK(weights_sha256(value) != h);
  Csr column = a;
  column.col_idx[1] = 1;
  CHECK(weights_sha256(column) != h);
  Csr shape = a;
  shape.cols = 4;
  CHECK(weights_sha256(shape) != h);
}

}  // namespace
}  // namespace spmmc
