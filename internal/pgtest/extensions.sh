# Sourced by `make test` before go test: what the extension tests need beyond
# the Postgres server binaries, set up as the rest of make test sets itself up.
# - PostGIS (the PostGIS tests): Debian packages it per server major version;
#   installed when missing and run as root with apt, else a line says how, and
#   those tests fail naming the same command (pgtest.RequireExtension).
# - pgvector (TestPgvectorColumnsAreDebeziumVectors): Debian 12 has no package
#   and this repository does not carry its source; when it is not installed
#   the test runs against a stand-in of its types (MOONCDC_PGVECTOR_STANDIN=1,
#   internal/pgtest/pgvector.go), and this says so.
# PGTEST_SHAREDIR and APT_GET are for testing this file.
pgtest_major="${PGTEST_VERSION:-15}"
pgtest_ext="${PGTEST_SHAREDIR:-/usr/share/postgresql/${pgtest_major}}/extension"
pgtest_apt="${APT_GET:-apt-get}"
if [ ! -f "${pgtest_ext}/postgis.control" ]; then
	if [ "$(id -u)" = 0 ] && command -v "${pgtest_apt%% *}" >/dev/null 2>&1; then
		echo "make test: installing postgresql-${pgtest_major}-postgis-3 (PostGIS, for the PostGIS tests)"
		DEBIAN_FRONTEND=noninteractive ${pgtest_apt} install -y -q "postgresql-${pgtest_major}-postgis-3" >/dev/null 2>&1 ||
			{ ${pgtest_apt} update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive ${pgtest_apt} install -y -q "postgresql-${pgtest_major}-postgis-3" >/dev/null 2>&1; } ||
			echo "make test: could not install postgresql-${pgtest_major}-postgis-3; the PostGIS tests will fail naming it"
	else
		echo "make test: PostGIS is not installed for PostgreSQL ${pgtest_major}; the PostGIS tests will fail until it is: apt-get install postgresql-${pgtest_major}-postgis-3"
	fi
fi
if [ ! -f "${pgtest_ext}/vector.control" ] && [ -z "${MOONCDC_PGVECTOR_STANDIN:-}" ]; then
	echo "make test: pgvector is not installed for PostgreSQL ${pgtest_major} (Debian 12 has no package): its test runs against a stand-in of its types (MOONCDC_PGVECTOR_STANDIN=1)"
	export MOONCDC_PGVECTOR_STANDIN=1
fi
