# Sourced by .ci/run: install PostgreSQL (Debian's package) if needed, start a throwaway server
# on loopback, and export DEEP_RESEARCH_TEST_POSTGRES_URL for the resume tests.
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
PG_DATA=$(mktemp -d /tmp/deep-research-pg.XXXXXX)
PG_PORT=${PG_PORT:-55432}
chown postgres "$PG_DATA"
su postgres -c "$PG_BIN/initdb -D $PG_DATA -A trust -U postgres" >/dev/null
su postgres -c "$PG_BIN/pg_ctl -D $PG_DATA -l $PG_DATA/server.log -w \
  -o '-p $PG_PORT -k /tmp -c listen_addresses=127.0.0.1' start" >/dev/null
trap 'su postgres -c "$PG_BIN/pg_ctl -D $PG_DATA -m fast stop" >/dev/null 2>&1; rm -rf "$PG_DATA"' EXIT
export DEEP_RESEARCH_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
