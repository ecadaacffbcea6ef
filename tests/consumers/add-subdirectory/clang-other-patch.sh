#!/bin/sh
# clang-15 of another patch release: says 15.0.99, compiles as the installed one.
if [ "$1" = "--version" ]; then
  clang-15 --version | sed 's/version 15\.0\.[0-9]*/version 15.0.99/'
  exit 0
fi
exec clang-15 "$@"
