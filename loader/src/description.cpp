// Device descriptions: DeviceCaps written to and read from a versioned JSON
// document, so that the loader's choice can be computed without the device.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fatcl/offline.hpp"

namespace fatcl {
namespace {

using json = nlohmann::json;

constexpr const char* kFormat = "fatcl-devices";

// CL_DEVICE_TYPE bits by name, in the order they are written.
const std::pair<const char*, std::uint64_t> kTypes[] = {{"default", CL_DEVICE_TYPE_DEFAULT},
                                                        {"cpu", CL_DEVICE_TYPE_CPU},
                                                        {"gpu", CL_DEVICE_TYPE_GPU},
                                                        {"accelerator", CL_DEVICE_TYPE_ACCELERATOR},
                                                        {"custom", CL_DEVICE_TYPE_CUSTOM}};

json describe(const DeviceCaps& c) {
  json types = json::array();
  for (const auto& [name, bit] : kTypes) {
    if (c.device_type & bit) types.push_back(name);
  }
  std::string why;
  const bool spirv = c.accepts_spirv("1.0", &why);
  json quirks = json::array();
  for (const DriverQuirk& q : driver_quirks(c)) {
    quirks.push_back({{"id", q.id}, {"versions", q.versions}, {"breaks", q.breaks},
                      {"fatcl_does", q.fatcl_does}});
  }
  return {{"platform", c.platform_name},
          {"name", c.device_name},
          {"vendor", c.vendor},
          {"device_version", c.device_version},
          {"driver_version", c.driver_version},
          {"il_version", c.il_version},
          {"cl_khr_il_program", c.khr_il_program},
          {"type", types},
          {"isa", c.isa},
          {"compute_units", c.compute_units},
          {"max_clock_mhz", c.max_clock_mhz},
          {"native_float_width", c.native_float_width},
          {"local_mem_bytes", c.local_mem_bytes},
          {"global_mem_bytes", c.global_mem_bytes},
          {"max_mem_alloc_bytes", c.max_mem_alloc_bytes},
          {"max_work_group_size", c.max_work_group_size},
          {"max_work_item_sizes", c.max_work_item_sizes},
          {"single_fp_fma", c.fused_multiply_add},
          {"spirv", spirv ? json{{"takes", true}, {"versions", c.il_version}}
                          : json{{"takes", false}, {"why", why}}},
          {"quirks", quirks}};
}

// Reads one device's fields, each error naming where it is.
class DeviceReader {
 public:
  DeviceReader(const json& device, std::string where) : device_(device), where_(std::move(where)) {}

  const json& field(const char* name, json::value_t type) const {
    const auto it = device_.find(name);
    if (it == device_.end()) fail(std::string("field \"") + name + "\" is missing");
    const bool number_wanted = type == json::value_t::number_unsigned;
    if (number_wanted ? !it->is_number_unsigned() : it->type() != type) {
      fail(std::string("field \"") + name + "\" is " + it->type_name() + ", not " +
           (number_wanted ? "a whole number >= 0" : json(type).type_name()));
    }
    return *it;
  }
  std::string text(const char* name) const {
    return field(name, json::value_t::string).get<std::string>();
  }
  bool flag(const char* name) const { return field(name, json::value_t::boolean).get<bool>(); }
  template <typename T>
  T number(const char* name) const {
    const std::uint64_t n = field(name, json::value_t::number_unsigned).get<std::uint64_t>();
    if (n > std::numeric_limits<T>::max()) {
      fail(std::string("field \"") + name + "\" is " + std::to_string(n) + ", above " +
           std::to_string(std::numeric_limits<T>::max()));
    }
    return static_cast<T>(n);
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(where_ + ": " + what); }

 private:
  const json& device_;
  std::string where_;
};

DeviceCaps read_device(const json& device, const std::string& where) {
  if (!device.is_object()) throw Error(where + ": is " + device.type_name() + ", not an object");
  // Name the device as soon as it can be named.
  std::string named = where;
  if (const auto n = device.find("name"); n != device.end() && n->is_string()) {
    named += " (" + n->get<std::string>().substr(0, 80) + ")";
  }
  const DeviceReader r(device, named);
  DeviceCaps c;
  c.platform_name = r.text("platform");
  c.device_name = r.text("name");
  c.vendor = r.text("vendor");
  c.device_version = r.text("device_version");
  if (!parse_opencl_version(c.device_version, &c.cl_major, &c.cl_minor)) {
    r.fail("device_version \"" + c.device_version.substr(0, 80) +
           "\" is not \"OpenCL <major>.<minor> ...\"");
  }
  c.driver_version = r.text("driver_version");
  c.il_version = r.text("il_version");
  c.khr_il_program = r.flag("cl_khr_il_program");
  for (const json& t : r.field("type", json::value_t::array)) {
    bool known = false;
    for (const auto& [name, bit] : kTypes) {
      if (t.is_string() && t.get<std::string>() == name) {
        c.device_type |= bit;
        known = true;
      }
    }
    if (!known) {
      r.fail("type " + t.dump().substr(0, 40) +
             " is not one of default, cpu, gpu, accelerator, custom");
    }
  }
  if (c.device_type == 0) r.fail("field \"type\" names no device type");
  c.isa = r.text("isa");
  c.compute_units = r.number<cl_uint>("compute_units");
  c.max_clock_mhz = r.number<cl_uint>("max_clock_mhz");
  c.native_float_width = r.number<cl_uint>("native_float_width");
  c.local_mem_bytes = r.number<std::uint64_t>("local_mem_bytes");
  c.global_mem_bytes = r.number<std::uint64_t>("global_mem_bytes");
  c.max_mem_alloc_bytes = r.number<std::uint64_t>("max_mem_alloc_bytes");
  c.max_work_group_size = r.number<std::size_t>("max_work_group_size");
  const json& sizes = r.field("max_work_item_sizes", json::value_t::array);
  if (sizes.size() != 3) {
    r.fail("field \"max_work_item_sizes\" has " + std::to_string(sizes.size()) +
           " numbers, not 3");
  }
  for (std::size_t d = 0; d < 3; ++d) {
    if (!sizes[d].is_number_unsigned()) {
      r.fail("max_work_item_sizes[" + std::to_string(d) + "] is " + sizes[d].type_name() +
             ", not a whole number >= 0");
    }
    c.max_work_item_sizes[d] = sizes[d].get<std::size_t>();
  }
  c.fused_multiply_add = r.flag("single_fp_fma");
  return c;
}

}  // namespace

std::string device_descriptions_json(const std::vector<DeviceCaps>& devices,
                                     const std::string& extra) {
  json doc = extra.empty() ? json::object() : json::parse(extra);
  doc["format"] = kFormat;
  doc["version"] = kDeviceDescriptionVersion;
  doc["fatcl"] = fatcl_version();
  doc["devices"] = json::array();
  for (const DeviceCaps& c : devices) doc["devices"].push_back(describe(c));
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::vector<DeviceDescription> parse_device_descriptions(std::string_view text,
                                                         const std::string& origin) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(origin + ": not JSON (" + e.what() + ")");
  }
  if (!doc.is_object()) throw Error(origin + ": is " + doc.type_name() + ", not an object");
  const auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || *format != kFormat) {
    throw Error(origin + ": not a fatcl device description (its \"format\" is " +
                (format == doc.end() ? std::string("missing") : format->dump().substr(0, 60)) +
                ", not \"" + kFormat + "\"; `fatcl devices --json` writes one)");
  }
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_unsigned()) {
    throw Error(origin + ": field \"version\" is missing or not a whole number");
  }
  if (version->get<std::uint64_t>() != kDeviceDescriptionVersion) {
    throw Error(origin + ": format version " + version->dump() + "; this fatcl (" +
                fatcl_version() + ") reads version " + std::to_string(kDeviceDescriptionVersion));
  }
  const auto devices = doc.find("devices");
  if (devices == doc.end() || !devices->is_array()) {
    throw Error(origin + ": field \"devices\" is missing or not an array");
  }
  if (devices->empty()) throw Error(origin + ": describes no device");
  std::vector<DeviceDescription> out;
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const std::string where = origin + ", device " + std::to_string(i);
    out.push_back({read_device((*devices)[i], where), where});
  }
  return out;
}

std::vector<DeviceDescription> read_device_descriptions(const std::string& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    throw Error(path + " is a folder, not a device description");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_device_descriptions(text.str(), path);
}

}  // namespace fatcl
