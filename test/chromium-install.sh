#!/usr/bin/env bash
# Debian's Chromium (and a font) for the console's browser tests (test/browser/), driven by playwright-core:
# test/debian-package.sh installs it when missing and prints the binary's path.
exec bash "$(dirname "$0")/debian-package.sh" chromium chromium fonts-dejavu-core
