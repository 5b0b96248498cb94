package main

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mooncdc/mooncdc/connector/config"
)

// This file maps a Debezium PostgreSQL connector's properties to mooncdc
// keys. Property names and defaults are Debezium 3.6.1's
// (PostgresConnectorConfig.java, CommonConnectorConfig.java,
// RelationalDatabaseConnectorConfig.java and the transforms' config
// definitions, cited beside each). Every property is either mapped, mapped
// with a note, or reported as not mapped with the reason.

// postgresConnectorClass is the only connector class import-debezium reads.
const postgresConnectorClass = "io.debezium.connector.postgresql.PostgresConnector"

// finding is one property import-debezium could not map, or mapped with a
// difference the user should know.
type finding struct {
	Property string
	Reason   string
	Mapped   bool // mapped, with the difference in Reason
}

// importOptions are the facts a connector config does not hold.
type importOptions struct {
	Brokers      []string // the Connect worker's bootstrap.servers
	OffsetsTopic string   // the Connect worker's offset.storage.topic
}

type importer struct {
	props    map[string]string
	used     map[string]bool
	out      *yamlTree
	findings []finding
	opts     importOptions
}

// importResult is the converted config and what could not be converted.
type importResult struct {
	Name     string
	Tree     *yamlTree
	Findings []finding
}

// importDebezium maps props, a Debezium PostgreSQL connector's config (the
// connector name under "name"), to a mooncdc config tree. It fails only
// when the config is not one of a PostgreSQL connector. supported says
// which keys the config loader accepts (loaderSupports).
func importDebezium(props map[string]string, opts importOptions, supported func(string) bool) (*importResult, error) {
	im := &importer{props: props, used: map[string]bool{}, out: newYAMLTree(supported), opts: opts}
	if c, ok := im.get("connector.class"); ok && c != postgresConnectorClass && c != "PostgresConnector" {
		return nil, fmt.Errorf("connector.class is %q; import-debezium reads %s configs only", c, postgresConnectorClass)
	}
	for _, k := range sortedKeys(props) {
		if v := props[k]; strings.Contains(v, "${") && k != "database.password" && !strings.HasSuffix(k, ".basic.auth.user.info") && !strings.HasPrefix(k, "transforms.") {
			im.findings = append(im.findings, finding{Property: k, Mapped: true,
				Reason: fmt.Sprintf("%s is a Kafka Connect config provider reference, copied as it is: replace it with its value", v)})
		}
	}
	im.name()
	im.postgres()
	im.kafka()
	im.snapshot()
	im.converters()
	im.format()
	im.transforms()
	im.heartbeat()
	im.signals()
	im.notifications()
	im.migrateFrom()
	im.rest()
	name, _ := im.peek("name")
	return &importResult{Name: name, Tree: im.out, Findings: im.findings}, nil
}

// get returns a property and marks it used.
func (im *importer) get(key string) (string, bool) {
	v, ok := im.props[key]
	if ok {
		im.used[key] = true
	}
	return strings.TrimSpace(v), ok
}

func (im *importer) peek(key string) (string, bool) {
	v, ok := im.props[key]
	return strings.TrimSpace(v), ok
}

// unmapped reports key as not mapped (and used).
func (im *importer) unmapped(key, reason string) {
	im.used[key] = true
	im.findings = append(im.findings, finding{Property: key, Reason: reason})
}

// note reports key as mapped with a difference.
func (im *importer) note(key, reason string) {
	im.used[key] = true
	im.findings = append(im.findings, finding{Property: key, Reason: reason, Mapped: true})
}

func (im *importer) name() {
	name, ok := im.get("name")
	if !ok || name == "" {
		name, _ = im.peek("topic.prefix")
		im.findings = append(im.findings, finding{Property: "name", Reason: "no connector name given: mooncdc's name is set to topic.prefix; migrate_from.debezium.connector_name must be the name the connector has in Kafka Connect", Mapped: true})
	}
	// mooncdc's name keys its offsets; migrate_from keeps Debezium's.
	clean := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '_' || r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, name)
	if clean != name {
		im.note("name", fmt.Sprintf("%q: mooncdc's name may hold only letters, digits, '_', '.' and '-': %q", name, clean))
	}
	im.out.set("name", clean, "")
}

// postgres maps the connection, slot, publication and table selection.
func (im *importer) postgres() {
	im.out.set("postgres.url", im.url(), "")
	im.password()

	// plugin.name defaults to decoderbufs (PostgresConnectorConfig.java:619-629).
	plugin, ok := im.get("plugin.name")
	if !ok {
		plugin = "decoderbufs"
	}
	slot, ok := im.get("slot.name")
	if !ok {
		slot = "debezium" // ReplicationConnection.java:104
	}
	slotComment := ""
	if plugin != "pgoutput" {
		slotComment = "a " + plugin + " slot: mooncdc reads pgoutput only; name a new slot here"
		im.unmapped("plugin.name", fmt.Sprintf("%q: mooncdc reads only pgoutput, so it cannot continue on this connector's slot; migrate_from cannot be used, and a new pgoutput slot means a new snapshot", plugin))
	}
	im.out.set("postgres.slot", slot, slotComment)
	pub, ok := im.get("publication.name")
	if !ok {
		pub = "dbz_publication" // ReplicationConnection.java:105
	}
	im.out.set("postgres.publication", pub, "")

	// publication.autocreate.mode defaults to all_tables
	// (PostgresConnectorConfig.java:773-790).
	switch mode, _ := im.get("publication.autocreate.mode"); mode {
	case "", "all_tables":
		if _, has := im.peek("publication.autocreate.mode"); has {
			im.note("publication.autocreate.mode", "all_tables: a missing publication is created FOR TABLE with the tables matching postgres.tables, not FOR ALL TABLES; an existing one is used as it is")
		}
	case "filtered":
		// What mooncdc does: FOR TABLE <matches> when missing.
	case "disabled", "no_tables":
		im.unmapped("publication.autocreate.mode", fmt.Sprintf("%q: mooncdc creates a missing publication FOR TABLE <postgres.tables matches>; create the publication before the first start to keep that from happening", mode))
	default:
		im.unmapped("publication.autocreate.mode", fmt.Sprintf("%q is not a Debezium 3.6.1 value", mode))
	}

	im.tables()
	im.columns()

	// publish.via.partition.root defaults to false in Debezium
	// (PostgresConnectorConfig.java:1160-1168), true in mooncdc.
	pvr := false
	if v, ok := im.get("publish.via.partition.root"); ok {
		pvr = javaBool(v)
	}
	im.out.set("postgres.publish_via_partition_root", pvr, "")
}

// url builds postgres.url from database.* without the password.
func (im *importer) url() string {
	host, _ := im.get("database.hostname")
	port, ok := im.get("database.port")
	if !ok {
		port = "5432" // PostgresConnectorConfig.java:612-617
	}
	user, _ := im.get("database.user")
	db, _ := im.get("database.dbname")
	u := url.URL{Scheme: "postgres", Host: host + ":" + port, Path: "/" + db}
	if user != "" {
		u.User = url.User(user)
	}
	q := url.Values{}
	// database.sslmode defaults to prefer (PostgresConnectorConfig.java:851-865),
	// the same values as libpq's.
	if mode, ok := im.get("database.sslmode"); ok {
		q.Set("sslmode", mode)
	} else {
		q.Set("sslmode", "prefer")
	}
	for _, k := range []string{"sslrootcert", "sslcert", "sslkey"} {
		if v, ok := im.get("database." + k); ok && v != "" {
			q.Set(k, v)
		}
	}
	if _, ok := im.get("database.sslpassword"); ok {
		im.unmapped("database.sslpassword", "a secret: not copied; add sslpassword=… to postgres.url through MOONCDC_POSTGRES_URL")
	}
	if v, ok := im.get("database.sslfactory"); ok {
		im.unmapped("database.sslfactory", fmt.Sprintf("%q is a Java class; use sslmode, sslrootcert, sslcert and sslkey in postgres.url", v))
	}
	if v, ok := im.get("database.tcpKeepAlive"); ok && v == "false" {
		im.unmapped("database.tcpKeepAlive", "mooncdc's connections always use TCP keepalives")
	}
	if _, ok := im.get("database.initial.statements"); ok {
		im.unmapped("database.initial.statements", "mooncdc fixes its own session settings (see Configuration) and runs no other statements")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// directoryRef matches Kafka's DirectoryConfigProvider reference
// ${directory:/path:file}, whose value is the file's content.
var directoryRef = regexp.MustCompile(`^\$\{directory:(.+):([^:}]+)\}$`)

// password never copies a password into the output: it may be printed,
// committed or pasted. A directory reference becomes password_file.
func (im *importer) password() {
	pw, ok := im.get("database.password")
	if !ok {
		return
	}
	if m := directoryRef.FindStringSubmatch(pw); m != nil {
		im.out.set("postgres.password_file", strings.TrimSuffix(m[1], "/")+"/"+m[2], "from "+pw)
		return
	}
	reason := "given inline: not copied into the output; write it to a file and set postgres.password_file, or give postgres.url with the password in MOONCDC_POSTGRES_URL"
	if strings.HasPrefix(pw, "${") {
		reason = fmt.Sprintf("the config provider reference %s is Kafka Connect's; put the password in a file of its own and set postgres.password_file, or give postgres.url in MOONCDC_POSTGRES_URL", pw)
	}
	im.unmapped("database.password", reason)
}

// tables maps the include and exclude lists (RelationalDatabaseConnectorConfig.java:260-299, 368-392).
func (im *importer) tables() {
	var include, exclude []string
	schemaList, hasSchemas := im.get("schema.include.list")
	if v, ok := im.get("table.include.list"); ok {
		for _, s := range splitRegexList(v) {
			include = append(include, im.patterns("table.include.list", s, 2)...)
		}
		if hasSchemas {
			// Debezium captures the tables both lists match: keep the
			// table patterns whose schema the schema list matches.
			include = im.inSchemas(include, schemaList)
		}
	} else if hasSchemas {
		for _, s := range splitRegexList(schemaList) {
			include = append(include, im.patterns("schema.include.list", s+`\..*`, 2)...)
		}
	}
	if v, ok := im.get("schema.exclude.list"); ok {
		for _, s := range splitRegexList(v) {
			exclude = append(exclude, im.patterns("schema.exclude.list", s+`\..*`, 2)...)
		}
	}
	if v, ok := im.get("table.exclude.list"); ok {
		for _, s := range splitRegexList(v) {
			exclude = append(exclude, im.patterns("table.exclude.list", s, 2)...)
		}
	}
	if len(include) > 0 {
		im.out.set("postgres.tables", include, "")
	} else if len(exclude) > 0 {
		// Debezium captures every table but the excluded ones.
		im.out.set("postgres.tables", []string{"*.*"}, "Debezium had no include list")
	}
	if len(exclude) > 0 {
		im.out.set("postgres.tables_exclude", exclude, "")
	}
}

// inSchemas keeps the table patterns whose schema one of the schema
// regexes matches whole and case-insensitively, as Debezium's
// (Predicates.java:229-236). A wildcard schema is kept, with a note.
func (im *importer) inSchemas(tables []string, schemaList string) []string {
	var res []*regexp.Regexp
	for _, s := range splitRegexList(schemaList) {
		re, err := regexp.Compile(`(?i)^(?:` + s + `)$`)
		if err != nil {
			im.unmapped("schema.include.list", fmt.Sprintf("%q: not a regex mooncdc can run (%v)", s, err))
			return tables
		}
		res = append(res, re)
	}
	var keep []string
	for _, t := range tables {
		tp, err := config.ParseTablePattern(t)
		switch {
		case err != nil:
			keep = append(keep, t)
		case strings.Contains(tp.Schema, "*"):
			keep = append(keep, t)
			im.note("schema.include.list", fmt.Sprintf("%s: a wildcard schema is not narrowed by schema.include.list", t))
		default:
			for _, re := range res {
				if re.MatchString(tp.Schema) {
					keep = append(keep, t)
					break
				}
			}
			if len(keep) == 0 || keep[len(keep)-1] != t {
				im.note("table.include.list", fmt.Sprintf("%s: left out, its schema is not in schema.include.list", t))
			}
		}
	}
	return keep
}

// columns maps column.include.list and column.exclude.list
// (RelationalDatabaseConnectorConfig.java:299-322).
func (im *importer) columns() {
	for _, p := range []struct{ prop, key string }{
		{"column.include.list", "postgres.columns_include"},
		{"column.exclude.list", "postgres.columns_exclude"},
	} {
		v, ok := im.get(p.prop)
		if !ok {
			continue
		}
		var pats []string
		for _, s := range splitRegexList(v) {
			pats = append(pats, im.patterns(p.prop, s, 3)...)
		}
		if len(pats) > 0 {
			im.out.set(p.key, pats, "")
		}
	}
}

// patterns converts one regex of property prop, reporting what does not
// convert.
func (im *importer) patterns(prop, re string, parts int) []string {
	pats, notes, err := regexToPatterns(re, parts)
	if err != nil {
		im.unmapped(prop, err.Error())
		return nil
	}
	for _, n := range notes {
		im.note(prop, fmt.Sprintf("%s: %s", re, n))
	}
	return pats
}

// kafka maps the topic prefix and what Kafka Connect's worker or
// connector overrides say about producing.
func (im *importer) kafka() {
	brokers := im.opts.Brokers
	comment := ""
	if len(brokers) == 0 {
		brokers = []string{"set-me:9092"}
		comment = "the Connect worker's bootstrap.servers (not in a connector config; or pass --brokers)"
		im.findings = append(im.findings, finding{Property: "bootstrap.servers", Reason: "a Connect worker setting, not in the connector config: set kafka.brokers (--brokers)"})
	}
	im.out.set("kafka.brokers", brokers, comment)
	// topic.prefix is required (CommonConnectorConfig.java:652).
	if prefix, ok := im.get("topic.prefix"); ok {
		im.out.set("kafka.topic_prefix", prefix, "")
	} else {
		im.findings = append(im.findings, finding{Property: "topic.prefix", Reason: "missing (Debezium requires it): mooncdc's topic prefix defaults to the name"})
	}
	switch v, _ := im.get("exactly.once.support"); v {
	case "required":
		im.out.set("kafka.delivery", "exactly-once", "")
	case "", "requested":
	default:
		im.unmapped("exactly.once.support", fmt.Sprintf("%q is not a Kafka Connect value", v))
	}
	if v, ok := im.get("producer.override.compression.type"); ok {
		if slices.Contains([]string{"none", "gzip", "snappy", "lz4", "zstd"}, v) {
			im.out.set("kafka.compression", v, "")
		} else {
			im.unmapped("producer.override.compression.type", fmt.Sprintf("%q: mooncdc takes none, gzip, snappy, lz4 or zstd", v))
		}
	}
	if v, ok := im.get("topic.creation.default.partitions"); ok {
		im.setInt("topic.creation.default.partitions", "kafka.topic_partitions", v)
	}
	if v, ok := im.get("topic.creation.default.replication.factor"); ok {
		im.setInt("topic.creation.default.replication.factor", "kafka.topic_replication_factor", v)
	}
}

// snapshot maps snapshot.mode (PostgresConnectorConfig.java:178-213, default
// initial) and snapshot.max.threads (CommonConnectorConfig.java:909-915).
func (im *importer) snapshot() {
	if mode, ok := im.get("snapshot.mode"); ok {
		switch mode {
		case "initial", "always", "initial_only":
			im.out.set("snapshot.mode", mode, "")
		case "no_data", "never":
			im.out.set("snapshot.mode", "never", "")
		case "when_needed":
			im.out.set("snapshot.mode", "initial", "")
			im.note("snapshot.mode", "when_needed became initial: mooncdc copies tables not yet copied; a lost slot stops it (exit 3) instead of re-copying")
		default:
			im.unmapped("snapshot.mode", fmt.Sprintf("%q has no mooncdc equivalent (initial, never, initial_only, always)", mode))
		}
	}
	if v, ok := im.get("snapshot.max.threads"); ok {
		im.setInt("snapshot.max.threads", "snapshot.workers", v)
	}
}

// setInt sets key to v as an integer, or reports prop.
func (im *importer) setInt(prop, key, v string) {
	n, err := strconv.Atoi(v)
	if err != nil {
		im.unmapped(prop, fmt.Sprintf("%q is not an integer", v))
		return
	}
	im.out.set(key, n, "")
}

// javaBool parses a boolean property as Kafka's ConfigDef does
// (Boolean.parseBoolean after validation: "true" in any case).
func javaBool(v string) bool { return strings.EqualFold(v, "true") }

func underscore(prop string) string { return strings.ReplaceAll(prop, ".", "_") }

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
