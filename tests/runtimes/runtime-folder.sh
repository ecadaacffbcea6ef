# Sourced by the scripts that set up a test runtime once per machine
# (pocl-spirv.sh, intel-cpu.sh): their command line and where they keep it.
#   runtime_folder NAME "WHAT COULD NOT BE DONE" "$@"
# sets cache (the argument, else $FATCL_RUNTIMES_DIR/NAME, else
# ~/.cache/fatcl/NAME), icd (<cache>/NAME.icd, the file to point
# OCL_ICD_VENDORS at) and failed (<cache>/build-failed.txt, the reason the
# runtime tests report); with --icd-path it prints icd and exits. fail REASON
# says why on stderr, leaves the reason in failed and exits 1.
runtime_folder() {
  _name="$1"
  _what="$2"
  shift 2
  _only_path=0
  if [ "${1:-}" = "--icd-path" ]; then
    _only_path=1
    shift
  fi
  cache="${1:-${FATCL_RUNTIMES_DIR:-${HOME:-/root}/.cache/fatcl}/$_name}"
  icd="$cache/$_name.icd"
  failed="$cache/build-failed.txt"
  if [ "$_only_path" -eq 1 ]; then
    echo "$icd"
    exit 0
  fi
}
fail() {
  mkdir -p "$cache"
  echo "$_name: $1" >&2
  echo "$_what: $1" > "$failed"
  exit 1
}
