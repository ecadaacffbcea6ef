// The dependency of needs_missing.cpp, kept out of its reach.
extern "C" int fatcl_test_missing_function() { return 0; }
