// Files that readers see whole or not at all (the store, program
// cache entries).
#pragma once

#include <filesystem>
#include <string_view>

namespace fatcl::detail {

// Writes `text` to a temporary file beside `path` (creating its folder),
// flushes it to disk and renames it into place. Throws fatcl::Error naming
// the file and the cause; leaves no temporary file behind on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view text);

}  // namespace fatcl::detail
