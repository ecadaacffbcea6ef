# Sourced by the install-failure tests: the runtime tests that need the
# runtime must report the install's reason, not just "missing".
#   reports_missing_runtime TESTS PLATFORM ICD "REASON THEY MUST GIVE"
reports_missing_runtime() {
  local out
  out="$(FATCL_TEST_PLATFORM="$2" FATCL_TEST_NEEDS="$3" FATCL_REQUIRE_RUNTIMES=1 \
         "$1" --gtest_filter=Auto.ChoosesTheExpectedTierAndExplainsEveryVariant 2>&1)"
  if echo "$out" | grep -qF "is missing ($4"; then
    echo "ok   the runtime test reports: $(echo "$out" | grep -m1 "is missing")"
  else
    echo "FAIL: the runtime test does not give the reason:"
    echo "$out"
    exit 1
  fi
}
