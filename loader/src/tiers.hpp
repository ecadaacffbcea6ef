// Tiers as strategies: each turns a variant into an unbuilt program for a
// device, or says why it cannot. plan() asks each whether it is offered;
// load() asks the chosen one for the bytes, the build options and the program.
#pragma once

#include <string>
#include <string_view>

#include "fatcl/loader.hpp"
#include "fatcl/store.hpp"

namespace fatcl::detail {

class TierStrategy {
 public:
  virtual ~TierStrategy() = default;
  virtual Tier tier() const = 0;
  // Why this tier is not offered for the variant on the device, or "".
  virtual std::string refusal(const Manifest& manifest, const Variant& variant,
                              const DeviceCaps& caps) const = 0;
  // The bytes handed to the driver.
  virtual std::string_view input(const Family& family, const Variant& variant) const = 0;
  // What the build is, for BuildKey::built: the bytes' hash (and options).
  virtual std::string built(const Family& family, const Variant& variant,
                            const std::string& build_options) const = 0;
  // Options for clBuildProgram.
  virtual std::string build_options(const Family& family, const Variant& variant,
                                    const DeviceCaps& caps) const;
  // What is handed to the driver and through what, in words: "SPIR-V 1.4
  // module (4212 B) through clCreateProgramWithIL"; the explanation's, on
  // the device and offline (predict_load).
  virtual std::string handed(const Family& family, const Variant& variant, const DeviceCaps& caps,
                             const std::string& build_options) const = 0;
  // The program, not yet built (with `build_options`, from build_options()
  // above); null with *failure set when the driver refuses it. *how gets
  // handed(). Only code that
  // Family::damage passed gets here: ranked_plan() refuses the rest.
  virtual cl_program create(const cl::Context& context, const cl::Device& device,
                            const DeviceCaps& caps, const Family& family, const Variant& variant,
                            const std::string& build_options, std::string* how,
                            std::string* failure) const = 0;
};

const TierStrategy& strategy(Tier tier);

// What load() and predict_load() say alike (loader/src/load.cpp): the note
// on a damaged bundle; a build the store remembers as failed on the device
// and driver of `key` ("" if none); each known driver quirk that applies.
std::string damage_note(const Family& family);
std::string remembered_build_failure(const Store& store, const BuildKey& key);
std::vector<std::string> quirk_lines(const DeviceCaps& caps);
// The steps once chain candidate `i` is chosen for `reason`: it, the
// candidates before it that failed, the rest not needed, then the plan's
// rejections.
std::vector<Step> steps_of_choice(const Plan& plan, std::size_t i, const std::string& reason,
                                  const std::vector<Step>& failed);

}  // namespace fatcl::detail
