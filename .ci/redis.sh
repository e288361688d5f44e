# Sourced by .ci/run: install Redis (Debian's package) if needed, start a throwaway server on
# loopback, and export DEEP_RESEARCH_TEST_REDIS_URL for the shared-limits and job-queue tests.
if ! command -v redis-server >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
REDIS_PORT=${REDIS_PORT:-56379}
REDIS_DIR=$(mktemp -d /tmp/deep-research-redis.XXXXXX)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$REDIS_DIR" \
  --daemonize yes --pidfile "$REDIS_DIR/redis.pid" >/dev/null
for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
export DEEP_RESEARCH_TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
# Stop it on exit too, keeping the PostgreSQL clean-up that .ci/postgres.sh set.
EARLIER_EXIT=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
trap "redis-cli -p $REDIS_PORT shutdown nosave >/dev/null 2>&1; rm -rf $REDIS_DIR; $EARLIER_EXIT" EXIT
