// The program-binary cache's entries: round trip, every kind of damage
// discarded with its reason, eviction of the least recently used, a folder
// that cannot be written, and concurrent writers of one key.
#include "fatcl/cache.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "fatcl/error.hpp"
#include "temp_dir.hpp"

namespace fatcl {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

TEST(ProgramCache, RoundTripAndOff) {
  TempDir dir;
  ProgramCache cache(dir.path / "programs", 1 << 20);
  const std::string binary(
      "\x7f"
      "ELF binary\0with zeros",
      22);
  EXPECT_FALSE(cache.get("key-a"));
  EXPECT_EQ(cache.put("key-a", binary), "");
  ASSERT_TRUE(cache.get("key-a"));
  EXPECT_EQ(*cache.get("key-a"), binary);
  EXPECT_FALSE(cache.get("key-b"));
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_FALSE(cache.get("key-a"));
  ProgramCache off;
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.put("key-a", binary), "");
  EXPECT_FALSE(off.get("key-a"));
}

TEST(ProgramCache, DamagedEntriesAreDiscardedWithTheirReason) {
  TempDir dir;
  ProgramCache cache(dir.path, 1 << 20);
  const std::string binary(1000, 'b');
  ASSERT_EQ(cache.put("key", binary), "");
  const std::string good = test::read_file(cache.path_of("key"));
  ASSERT_EQ(cache.put("other key", binary), "");
  const std::string foreign = test::read_file(cache.path_of("other key"));
  std::string flipped = good;
  flipped[flipped.size() - 10] ^= 1;
  const struct {
    std::string bytes;
    const char* reason;
  } cases[] = {
      {"", "no FATCLBIN magic"},
      {"garbage that is not an entry at all", "no FATCLBIN magic"},
      {good.substr(0, 10), "entry format"},
      {good.substr(0, 17), "truncated in its key"},
      {good.substr(0, good.size() - 1000 - 10), "truncated in its header"},
      {good.substr(0, good.size() - 1), "the binary has 999 bytes, the header says 1000"},
      {flipped, "the checksum does not match"},
      {foreign, "it holds another key"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.reason);
    test::write_file(cache.path_of("key"), c.bytes);
    std::string why;
    EXPECT_FALSE(cache.get("key", &why));
    EXPECT_NE(why.find(c.reason), std::string::npos) << why;
    EXPECT_NE(why.find(cache.path_of("key").string()), std::string::npos) << why;
    EXPECT_FALSE(fs::exists(cache.path_of("key"))) << "a damaged entry stays";
  }
}

// verify() reads every entry as get() would and changes nothing; a
// temporary file a killed writer left is listed, and the next write removes
// it once it is an hour old.
TEST(ProgramCache, VerifyNamesDamageAndStaleTemporariesGo) {
  TempDir dir;
  ProgramCache cache(dir.path, 1 << 20);
  ASSERT_EQ(cache.put("key", std::string(1000, 'b')), "");
  ASSERT_EQ(cache.put("other key", std::string(500, 'c')), "");
  ProgramCache::Check c = cache.verify();
  EXPECT_EQ(c.whole, 2u);
  EXPECT_TRUE(c.damaged.empty());
  fs::resize_file(cache.path_of("key"), 600);
  fs::copy_file(cache.path_of("other key"), dir.path / "0000000000000000.bin");
  const fs::path old_temp = cache.path_of("key").string() + ".Ab12Cd";
  const fs::path new_temp = cache.path_of("other key").string() + ".Xy34Zw";
  std::ofstream(old_temp) << "half an entry";
  std::ofstream(new_temp) << "half an entry";
  fs::last_write_time(old_temp, fs::file_time_type::clock::now() - std::chrono::hours(2));
  c = cache.verify();
  EXPECT_EQ(c.whole, 1u);
  ASSERT_EQ(c.damaged.size(), 2u);
  const std::string both = c.damaged[0] + "\n" + c.damaged[1];
  EXPECT_NE(both.find("the binary has"), std::string::npos) << both;
  EXPECT_NE(both.find("its key belongs in"), std::string::npos) << both;
  EXPECT_EQ(c.temporary.size(), 2u);
  EXPECT_TRUE(fs::exists(cache.path_of("key")));  // verify changes nothing
  ASSERT_EQ(cache.put("third key", "x"), "");
  EXPECT_FALSE(fs::exists(old_temp));
  EXPECT_TRUE(fs::exists(new_temp));  // perhaps a writer at work
}

TEST(ProgramCache, TheLeastRecentlyUsedGoFirst) {
  TempDir dir;
  // Room for two entries of ~1 KiB, not three.
  ProgramCache cache(dir.path, 2600);
  const std::string binary(1000, 'x');
  ASSERT_EQ(cache.put("first", binary), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(cache.put("second", binary), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(cache.get("first"));  // a use: "second" is now the oldest
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(cache.put("third", binary), "");
  EXPECT_TRUE(cache.get("first"));
  EXPECT_FALSE(cache.get("second"));
  EXPECT_TRUE(cache.get("third"));
  EXPECT_LE(cache.stats().bytes, 2600u);
}

TEST(ProgramCache, AFolderThatCannotBeWrittenDegradesWithTheReason) {
  TempDir dir;
  test::write_file(dir.path / "a-file", "not a folder");
  ProgramCache cache(dir.path / "a-file" / "programs", 1 << 20);
  const std::string warning = cache.put("key", "binary");
  EXPECT_NE(warning.find("not cached: cannot create"), std::string::npos) << warning;
  EXPECT_FALSE(cache.get("key"));
}

TEST(ProgramCache, APathThatIsAFileIsNamedByStatsAndClear) {
  TempDir dir;
  test::write_file(dir.path / "a-file", "not a folder");
  ProgramCache cache(dir.path / "a-file", 1 << 20);
  for (const auto& call : {std::function<void()>([&] { cache.stats(); }),
                           std::function<void()>([&] { cache.clear(); })}) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("a-file is not a folder"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(ProgramCache(dir.path / "not-made-yet", 1 << 20).stats().entries, 0u);
}

// Eight processes writing one key over and over leave one whole entry.
TEST(ProgramCache, ConcurrentWritersLeaveOneWholeEntry) {
  TempDir dir;
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ProgramCache cache(dir.path, 1 << 24);
      const std::string binary(100000 + i, char('a' + i));
      for (int round = 0; round < 30; ++round) {
        if (!cache.put("shared key", binary).empty()) _exit(1);
      }
      _exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  ProgramCache cache(dir.path, 1 << 24);
  std::string why;
  const std::optional<std::string> entry = cache.get("shared key", &why);
  ASSERT_TRUE(entry) << why;
  ASSERT_GE(entry->size(), 100000u);
  EXPECT_EQ(entry->size(), 100000u + std::size_t(entry->front() - 'a'));
  EXPECT_EQ(cache.stats().entries, 1u);
}

}  // namespace
}  // namespace fatcl
