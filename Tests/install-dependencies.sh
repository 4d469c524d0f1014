#!/usr/bin/env bash
# Installs what building, running and testing need, from Debian's packages.
# Usage: Tests/install-dependencies.sh [run|test|bench]   (default: test)
set -euo pipefail
what="${1:-test}"
# libpq-dev in every mode: the build links libpq (the PostgreSQL store).
packages=(libmicrohttpd-dev libsqlite3-dev libssl-dev libpq-dev pkg-config)
case "$what" in
  run) ;;
  # postgresql: initdb and pg_ctl, for the private cluster the PostgreSQL tests start;
  # systemd: systemd-analyze, which checks the unit in docs/systemd.
  test) packages+=(prometheus chromium fonts-inter python3 sqlite3 curl postgresql systemd) ;;
  # postgresql: the private cluster of the bench's postgres phase.
  bench) packages+=(prometheus-pushgateway wrk postgresql) ;;
  *) echo "usage: $0 [run|test|bench]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
