#!/bin/sh
# scripts/deps.sh [--ci]: install, from Debian's packages, whatever caliber
# needs to build and test and is missing; do nothing when all is present.
#   always: a C compiler, make, pkg-config, jansson, OpenSSL's libcrypto,
#           cmocka, python3 with pytest (the plugin tests), Hypothesis
#           (the fuzz test of the inventory reader) and jsonschema (the
#           receipts checked against docs/schema), the openssl command
#           (keys for the signed-seal tests), git and xz (runs committed as
#           .tar.xz archives under campaigns/*/archives/), and strace (the
#           test that counts what caliber report opens)
#   --ci:   also clang (libFuzzer targets), chromium and python3-pil (the
#           report's browser test renders its HTML and reads the screenshot),
#           groff (the man pages render without a warning),
#           python3-venv and python3-setuptools (the install test makes a
#           virtual environment and pip-installs python/ in it, offline),
#           and Slurm with what its accounting needs (tests/slurm/run.sh
#           starts a one-node cluster: slurm-wlm, slurmdbd, munge,
#           mariadb-server)
set -eu

missing=""
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing="$missing $2"; }
need_pc() { pkg-config --exists "$1" 2>/dev/null || missing="$missing $2"; }

need_cmd cc gcc
need_cmd make make
need_cmd pkg-config pkg-config
if command -v pkg-config >/dev/null 2>&1; then
	need_pc jansson libjansson-dev
	need_pc libcrypto libssl-dev
	need_pc cmocka libcmocka-dev
else
	missing="$missing libjansson-dev libssl-dev libcmocka-dev"
fi
need_cmd openssl openssl
need_cmd git git
need_cmd xz xz-utils
need_cmd strace strace
need_cmd python3 python3
# Debian's python3-pytest serves /usr/bin/python3; a python3 earlier on PATH
# (pyenv, a venv) may lack it, and tests/run.sh looks for one that has it.
{ python3 -c 'import pytest' || /usr/bin/python3 -c 'import pytest'; } >/dev/null 2>&1 ||
	missing="$missing python3-pytest"
{ python3 -c 'import pytest, hypothesis' || /usr/bin/python3 -c 'import pytest, hypothesis'; } >/dev/null 2>&1 ||
	missing="$missing python3-hypothesis"
{ python3 -c 'import jsonschema' || /usr/bin/python3 -c 'import jsonschema'; } >/dev/null 2>&1 ||
	missing="$missing python3-jsonschema"
if [ "${1:-}" = "--ci" ]; then
	need_cmd clang clang
	need_cmd chromium chromium
	need_cmd groff groff-base
	{ python3 -c 'import PIL' || /usr/bin/python3 -c 'import PIL'; } >/dev/null 2>&1 ||
		missing="$missing python3-pil"
	{ python3 -c 'import ensurepip, venv' || /usr/bin/python3 -c 'import ensurepip, venv'; } >/dev/null 2>&1 ||
		missing="$missing python3-venv"
	{ python3 -c 'import setuptools' || /usr/bin/python3 -c 'import setuptools'; } >/dev/null 2>&1 ||
		missing="$missing python3-setuptools"
	need_cmd slurmctld slurm-wlm
	need_cmd slurmdbd slurmdbd
	need_cmd munged munge
	need_cmd mariadbd mariadb-server
fi

if [ -z "$missing" ]; then
	echo "deps: everything caliber needs is present"
	exit 0
fi
echo "deps: installing:$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
