// Files that readers see whole or not at all (the store, program
// cache entries).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace fatcl::detail {

// Writes `text` to a temporary file beside `path` (creating its folder),
// flushes it to disk and renames it into place. Throws fatcl::Error naming
// the file and the cause; leaves no temporary file behind on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view text);

// The name of the file a temporary file of write_file_atomic was to become
// ("tuning.json" for "tuning.json.Xy12Zw"), or "" if `name` is not one. A
// writer killed before its rename leaves such a file behind.
std::string atomic_target(std::string_view name);

// Whether `entry` is a temporary file of write_file_atomic old enough that
// its writer is gone (no write takes an hour), so that the next writer may
// remove it.
bool stale_temporary(const std::filesystem::directory_entry& entry);

}  // namespace fatcl::detail
