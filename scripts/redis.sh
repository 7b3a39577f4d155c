#!/usr/bin/env bash
# Start a throwaway redis-server for planfuzz's shared example database and print its URL (redis://127.0.0.1:PORT/0).
# Installs redis-server with apt-get when it is missing and we are root. Usage: scripts/redis.sh [DIR]
# DIR (default: a new temp dir) holds the pidfile, log and data; stop it with: kill "$(cat DIR/redis.pid)"
set -euo pipefail
if ! command -v redis-server >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get install -y -q redis-server || { apt-get update -q && apt-get install -y -q redis-server; }) >/dev/null 2>&1
  else
    echo "redis.sh: redis-server is not installed; run: sudo apt-get install -y redis-server" >&2; exit 1
  fi
fi
dir="${1:-$(mktemp -d /tmp/planfuzz-redis.XXXXXX)}"
mkdir -p "$dir"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
redis-server --bind 127.0.0.1 --port "$port" --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
  --dir "$dir" --save "" --appendonly no >/dev/null
for _ in $(seq 50); do
  if redis-cli -p "$port" ping >/dev/null 2>&1; then echo "redis://127.0.0.1:$port/0"; exit 0; fi
  sleep 0.1
done
echo "redis.sh: redis-server did not answer on port $port (see $dir/redis.log)" >&2; exit 1
