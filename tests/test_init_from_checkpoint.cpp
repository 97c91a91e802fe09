// io::init_from_checkpoint (tf.compat.v1.train.init_from_checkpoint). Expected values: the
// tensors written by the test itself through BundleWriter, and the fixture's documented values
// (fixtures/FORMATS.md: ckpt_tf1_half_plus_three holds a = 0.5, b = 3.0, c = 3.0, float
// scalars).
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <hookfuse/io/bundle_writer.hpp>
#include <hookfuse/io/init_from_checkpoint.hpp>
#include <hookfuse/io/saver.hpp>
#include <string>
#include <vector>

#include "checkpoint_test_vars.hpp"
#include "error_of.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using hookfuse::io::init_from_checkpoint;
using hookfuse::io::InitializedVariable;
using hookfuse_test::error_of;
using hookfuse_test::TempDir;
using hookfuse_test::test_var;
using hookfuse_test::TestVar;

namespace {

/// A checkpoint "pre/model.ckpt-7" with old/w [3], old/b [2], other/v [2] (floats), step 7.
std::string write_pretrained(const fs::path& dir) {
  const std::string prefix = (dir / "model.ckpt-7").string();
  hookfuse::io::BundleWriter w(prefix);
  w.add("old/w", {3}, std::vector<float>{1.5f, 2.5f, 3.5f});
  w.add("old/b", {2}, std::vector<float>{-1.0f, -2.0f});
  w.add("other/v", {2}, std::vector<float>{7.0f, 8.0f});
  w.add("global_step", {}, std::array<std::int64_t, 1>{7});
  w.finish();
  return prefix;
}

}  // namespace

TEST_CASE("{'old/': 'new/'} loads old/w into new/w and old/b into new/b") {
  TempDir dir("warm");
  const std::string prefix = write_pretrained(dir.path);
  std::vector<float> w(3, 0.0f), b(2, 0.0f), untouched(2, 9.0f);
  const std::vector<TestVar> vars = {test_var("new/w", {3}, w), test_var("new/b", {2}, b),
                                     test_var("head/v", {2}, untouched)};
  const auto r = init_from_checkpoint(prefix, {{"old/", "new/"}}, vars);
  CHECK(w == std::vector<float>{1.5f, 2.5f, 3.5f});
  CHECK(b == std::vector<float>{-1.0f, -2.0f});
  CHECK(untouched == std::vector<float>{9.0f, 9.0f});
  CHECK(r.checkpoint == prefix);
  CHECK(r.variables == std::vector<InitializedVariable>{{"new/w", "old/w"}, {"new/b", "old/b"}});
}

TEST_CASE("a directory resolves to its latest checkpoint, single renames and '/': '/'") {
  TempDir dir("warm");
  std::vector<float> v = {4.0f, 5.0f};
  std::int64_t step = 3;
  {
    hookfuse::io::Saver saver;
    const std::vector<TestVar> saved = {test_var("scope/v", {2}, v), test_var("global_step", step)};
    saver.save(saved, (dir.path / "model.ckpt").string(), 3);
  }
  SECTION("single rename") {
    std::vector<float> x(2, 0.0f);
    const std::vector<TestVar> vars = {test_var("model/x", {2}, x)};
    const auto r = init_from_checkpoint(dir.path, {{"scope/v", "model/x"}}, vars);
    CHECK(x == std::vector<float>{4.0f, 5.0f});
    CHECK(fs::path(r.checkpoint) == dir.path / "model.ckpt-3");
  }
  SECTION("'/': '/' loads every variable from the tensor of the same name") {
    std::vector<float> same(2, 0.0f);
    std::int64_t s = 0;
    const std::vector<TestVar> vars = {test_var("scope/v", {2}, same), test_var("global_step", s)};
    const auto r = init_from_checkpoint(dir.path, {{"/", "/"}}, vars);
    CHECK(same == std::vector<float>{4.0f, 5.0f});
    CHECK(s == 3);
    CHECK(r.variables.size() == 2);
  }
  SECTION("a directory without a checkpoint") {
    TempDir empty("warm_empty");
    std::vector<float> x(2, 0.0f);
    const std::vector<TestVar> vars = {test_var("model/x", {2}, x)};
    CHECK_THAT(error_of<hookfuse::io::NotFoundError>([&] {
                 (void)init_from_checkpoint(empty.path, {{"/", "/"}}, vars);
               }),
               Catch::Contains("couldn't find 'checkpoint' file or checkpoints in given "
                               "directory " +
                               empty.path.string() + " (no " +
                               (empty.path / "checkpoint").string() + ")"));
  }
}

TEST_CASE("init_from_checkpoint errors name both names and shapes, nothing is written") {
  TempDir dir("warm");
  const std::string prefix = write_pretrained(dir.path);
  std::vector<float> w(3, 0.0f), b(2, 0.0f), c(4, 0.0f);

  SECTION("a name missing in the checkpoint") {
    const std::vector<TestVar> vars = {test_var("new/w", {3}, w), test_var("new/c", {4}, c)};
    const std::string msg = error_of<hookfuse::ValueError>([&] {
      (void)init_from_checkpoint(prefix, {{"old/", "new/"}}, vars);
    });
    CHECK_THAT(
        msg, Catch::Contains("tensor 'old/c'") && Catch::Contains("'new/c' (DT_FLOAT [4])") &&
                 Catch::Contains("not in the checkpoint") && Catch::Contains("model.ckpt-7.index"));
    CHECK(w == std::vector<float>(3, 0.0f));  // old/w was fine, but nothing is written
  }
  SECTION("a shape mismatch") {
    const std::vector<TestVar> vars = {test_var("new/b", {2}, b), test_var("new/w", {1, 3}, w)};
    const std::string msg = error_of<hookfuse::ValueError>([&] {
      (void)init_from_checkpoint(prefix, {{"old/", "new/"}}, vars);
    });
    CHECK_THAT(msg, Catch::Contains("'new/w' (DT_FLOAT [1,3])") &&
                        Catch::Contains("tensor 'old/w' (DT_FLOAT [3])"));
    CHECK(b == std::vector<float>(2, 0.0f));
  }
  SECTION("a dtype mismatch") {
    std::vector<double> wd(3, 0.0);
    const std::vector<TestVar> vars = {test_var("new/w", {3}, wd)};
    const std::string msg = error_of<hookfuse::ValueError>([&] {
      (void)init_from_checkpoint(prefix, {{"old/w", "new/w"}}, vars);
    });
    CHECK_THAT(msg, Catch::Contains("'new/w' (DT_DOUBLE [3])") &&
                        Catch::Contains("'old/w' (DT_FLOAT [3])"));
  }
  SECTION("a scope key without its trailing '/'") {
    const std::vector<TestVar> vars = {test_var("new/w", {3}, w)};
    const std::string msg = error_of<hookfuse::ValueError>([&] {
      (void)init_from_checkpoint(prefix, {{"old", "new/"}}, vars);
    });
    CHECK_THAT(msg, Catch::Contains("{'old': 'new/'}") && Catch::Contains("end with '/'"));
  }
  SECTION("a mapped model variable that does not exist") {
    const std::vector<TestVar> vars = {test_var("new/w", {3}, w)};
    const std::string msg = error_of<hookfuse::ValueError>([&] {
      (void)init_from_checkpoint(prefix, {{"old/w", "new/typo"}}, vars);
    });
    CHECK_THAT(msg, Catch::Contains("'new/typo' is not a variable of the model"));
  }
  SECTION("a model scope without variables") {
    const std::vector<TestVar> vars = {test_var("new/w", {3}, w)};
    const std::string msg = error_of<hookfuse::ValueError>([&] {
      (void)init_from_checkpoint(prefix, {{"old/", "nothing/"}}, vars);
    });
    CHECK_THAT(msg, Catch::Contains("no variable in scope 'nothing/'"));
  }
}

TEST_CASE("a scope is matched on whole components: 'new/' does not take 'newer/w'") {
  TempDir dir("warm");
  const std::string prefix = write_pretrained(dir.path);
  std::vector<float> w(3, 0.0f), newer(3, 0.0f);
  const std::vector<TestVar> vars = {test_var("new/w", {3}, w), test_var("newer/w", {3}, newer)};
  const auto r = init_from_checkpoint(prefix, {{"old/", "new/"}}, vars);
  CHECK(r.variables == std::vector<InitializedVariable>{{"new/w", "old/w"}});
  CHECK(newer == std::vector<float>(3, 0.0f));
}

TEST_CASE("fixture: ckpt_tf1_half_plus_three (TensorFlow's) initialises renamed variables") {
  const fs::path dir = fs::path(HOOKFUSE_FIXTURES_DIR) / "tf" / "ckpt_tf1_half_plus_three";
  if (!fs::exists(dir / "variables.index")) HOOKFUSE_SKIP("fixture " << dir << " not found");
  std::vector<float> a(1, 0.0f), b(1, 0.0f), c(1, 0.0f);
  const std::vector<TestVar> vars = {test_var("model/a", {}, a), test_var("model/b", {}, b),
                                     test_var("bias", {}, c)};
  const auto r = init_from_checkpoint(dir / "variables", {{"/", "model/"}, {"c", "bias"}}, vars);
  CHECK(a[0] == 0.5f);
  CHECK(b[0] == 3.0f);
  CHECK(c[0] == 3.0f);
  CHECK(r.variables.size() == 3);
}

TEST_CASE("the Logger overload logs one TensorFlow-style INFO line per variable set") {
  TempDir dir("warm");
  const std::string prefix = write_pretrained(dir.path);
  struct Lines {
    std::vector<std::string> lines;
    void log(hookfuse::Severity s, std::string_view line) {
      if (s == hookfuse::Severity::info) lines.emplace_back(line);
    }
  } logger;
  std::vector<float> w(3, 0.0f);
  const std::vector<TestVar> vars = {test_var("new/w", {3}, w)};
  (void)init_from_checkpoint(prefix, {{"old/w", "new/w"}}, vars, logger);
  CHECK(logger.lines == std::vector<std::string>{"Initialize variable new/w from checkpoint " +
                                                 prefix + " with old/w"});
}
