#!/usr/bin/env bash
# Debian's HAProxy for the tests that run the shipped load-balancer configurations (test/cluster/hosts.test.ts):
# test/debian-package.sh installs it when missing and prints the binary's path.
exec bash "$(dirname "$0")/debian-package.sh" haproxy haproxy
