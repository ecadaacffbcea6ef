// find_icds(): every ICD the loader would try, and why one gives no platform.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "fatcl/loader.hpp"
#include "temp_dir.hpp"

namespace fatcl {
namespace {

const Icd* icd_of(const IcdSearch& search, const std::string& file) {
  for (const Icd& icd : search.icds) {
    if (std::filesystem::path(icd.icd_file).filename() == file) return &icd;
  }
  return nullptr;
}

// One process, one folder: the ICD loader reads OCL_ICD_VENDORS once, at
// the first OpenCL call, which find_icds() makes.
TEST(Icd, AFolderOfIcdFilesIsReadByTheLoadersRules) {
  test::TempDir dir;
  test::write_file(dir.path / "absent.icd", "/nonexistent/libfatcl-absent.so\n");
  test::write_file(dir.path / "empty.icd", "");
  test::write_file(dir.path / "not-an-icd.icd", "libm.so.6\n");  // loaded already, and no ICD
  test::write_file(dir.path / "needs-missing.icd",
                   std::string(FATCL_TEST_ICD_NEEDS_MISSING) + "\n");
  test::write_file(dir.path / "readme.txt", "/nonexistent/ignored.so\n");  // not *.icd: not read
  ASSERT_EQ(setenv("OCL_ICD_VENDORS", dir.path.c_str(), 1), 0);
  const IcdSearch search = find_icds();
  EXPECT_EQ(search.where, "OCL_ICD_VENDORS=" + dir.path.string() + " (a folder)");
  EXPECT_EQ(search.problem, "");
  ASSERT_EQ(search.icds.size(), 4u) << search.to_string();
  const Icd* absent = icd_of(search, "absent.icd");
  ASSERT_NE(absent, nullptr);
  EXPECT_EQ(absent->library, "/nonexistent/libfatcl-absent.so");
  EXPECT_FALSE(absent->opens);
  EXPECT_EQ(absent->problem,
            "does not open: /nonexistent/libfatcl-absent.so: cannot open shared object file: No "
            "such file or directory");
  EXPECT_EQ(icd_of(search, "empty.icd")->problem, "names no library (its first line is empty)");
  EXPECT_EQ(icd_of(search, "not-an-icd.icd")->problem,
            "opens, but is not an OpenCL ICD (no clGetExtensionFunctionAddress)");
  EXPECT_TRUE(icd_of(search, "not-an-icd.icd")->opens);
  // The case of Intel's runtime without intel-cmplr-lib-rt: a dependency
  // that does not resolve, named as the dynamic linker names it.
  EXPECT_EQ(icd_of(search, "needs-missing.icd")->problem,
            "does not open: libfatcl_test_missing.so: cannot open shared object file: No such "
            "file or directory");
  const std::string text = search.to_string();
  EXPECT_NE(text.find("\n  " + (dir.path / "absent.icd").string() +
                      " -> /nonexistent/libfatcl-absent.so: does not open: "),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("readme.txt"), std::string::npos) << text;
  // The error of a process that finds no platform names them too.
  try {
    list_platforms();
    FAIL() << "a platform was found";
  } catch (const Error& e) {
    EXPECT_EQ(e.cl_code(), CL_PLATFORM_NOT_FOUND_KHR);
    EXPECT_EQ(std::string(e.what()).find("no OpenCL platform found; ICDs the loader tries "
                                         "(OCL_ICD_VENDORS=" +
                                         dir.path.string() + " (a folder))\n  "),
              0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("libfatcl_test_missing.so: cannot open"),
              std::string::npos)
        << e.what();
  }
}

TEST(Icd, AnEmptyOrMissingPlaceIsSaid) {
  test::TempDir dir;
  ASSERT_EQ(setenv("OCL_ICD_VENDORS", dir.path.c_str(), 1), 0);
  EXPECT_EQ(find_icds().problem, "the folder " + dir.path.string() + " holds no .icd file");
}

TEST(Icd, AMissingIcdFileIsSaid) {
  ASSERT_EQ(setenv("OCL_ICD_VENDORS", "/nonexistent/fatcl.icd", 1), 0);
  const IcdSearch search = find_icds();
  EXPECT_EQ(search.where, "OCL_ICD_VENDORS=/nonexistent/fatcl.icd (an .icd file)");
  EXPECT_EQ(search.problem,
            "the .icd file /nonexistent/fatcl.icd does not exist or cannot be read");
  EXPECT_TRUE(search.icds.empty());
}

TEST(Icd, ALibraryNamedDirectlyIsTried) {
  ASSERT_EQ(setenv("OCL_ICD_VENDORS", FATCL_TEST_ICD_NEEDS_MISSING, 1), 0);
  const IcdSearch search = find_icds();
  EXPECT_EQ(search.where,
            std::string("OCL_ICD_VENDORS=") + FATCL_TEST_ICD_NEEDS_MISSING + " (a library)");
  ASSERT_EQ(search.icds.size(), 1u);
  EXPECT_EQ(search.icds[0].icd_file, "");
  EXPECT_NE(search.icds[0].problem.find("does not open: libfatcl_test_missing.so"),
            std::string::npos)
      << search.icds[0].problem;
}

}  // namespace
}  // namespace fatcl
