// Package transform applies Kafka Connect's single message transforms
// (SMTs) and Debezium's CEL-evaluated Filter and ContentBasedRouter to
// records, as a chain configured with Kafka Connect's keys
// (`transforms`, `transforms.<alias>.type`, `predicates` …). It is pure:
// no Postgres, no Kafka, no goroutines; every function is a function of
// its inputs (the only shared state is per-transform caches of derived
// schemas, guarded, and a pool of CEL activations).
//
// Built (issue 30, the foundation):
//   - The record model (record.go): Kafka Connect's ConnectRecord — topic,
//     partition, key and value each with a schema, timestamp, headers —
//     with schema.Schema as the schema (it is already Connect's model: the
//     JSON converter's schemas and the Avro schemas are rendered from it)
//     and Go values for Connect's Java values (Struct, Map, []any,
//     primitives; time.Time for the logical Timestamp, Date and Time;
//     Decimal). No second schema model is added.
//   - Conditions and topic expressions in CEL (cel.go, celvalues.go) over
//     `value`, `key`, `topic` and `headers`, compiled once; a bad
//     expression is an *ExprError with line and column; a condition must
//     be boolean at compile time. The record is read in place, not copied.
//   - Debezium's Filter and ContentBasedRouter (scripting.go) with their
//     `topic.regex` and `null.handling.mode`, `language: cel`.
//   - Kafka Connect's InsertField, ReplaceField, TimestampConverter,
//     HeaderFrom (each $Key and $Value), ValueToKey and Cast, with and
//     without schemas, changing the schema as Connect does; the predicates
//     TopicNameMatches, RecordIsTombstone and HasHeaderKey with `negate`.
//   - Parse (config.go): the keys into a Chain, errors naming the key.
//   - Chain.Apply: stages in configured order; a failing stage is an
//     *Error naming its alias and type.
//
// Differences from Kafka Connect, each deliberate: regular expressions
// are RE2 (no backreferences or lookaround; refused when configured);
// InsertField's offset.field is refused (a source record has no offset);
// TimestampConverter's `format` supports the SimpleDateFormat letters
// G y M L d D E u a H k K h m s S z Z X (the week-based w W Y F, which
// hang on the JVM's locale, are refused when configured) in UTC,
// with GregorianCalendar's Julian dates before 1582-10-15 as Java has them;
// Cast writes dates in UTC where Java uses the JVM's zone, and floats as
// Java 19+ does (shortest round-trip digits); keys no transform reads are
// refused. Kafka's nested field paths (KIP-821, field.syntax.version)
// reach only ExtractField at the revision followed, none of these SMTs.
// In CEL, Debezium's `header.<name>.value` is `headers.<name>` (the last
// header of a name), a null in `?:` is written dyn(null), and a Decimal
// is its BigDecimal.toString string (CEL has no decimal type). A null
// struct field reads as its default, as Debezium's engines read it
// (Struct.get). Debezium's `keySchema` and `valueSchema` bindings have
// no CEL counterpart.
//
// Also different (where an input is refused, Kafka or Debezium would read
// it):
//   - TimestampConverter parses offsets (+hhmm, GMT+h:mm, ISO 8601 X) as
//     Java does but of the zone names only UTC and GMT (Java reads any:
//     PST), unsigned numbers of ASCII digits only (Java reads "-1" as a
//     month, and other scripts' digits), month and day names in English
//     (Java: the JVM's locale). The two-digit-year century starts 80 years
//     before each parse (Java: before the transform was configured). A
//     struct schema with a default value is refused (Java converts the
//     default too).
//   - InsertField fails on a required inserted field that has no value
//     (a record without partition or timestamp); Kafka builds the Struct
//     and the converter fails later; an empty insertion field name is
//     refused when configured (Kafka fails on it at every record with a
//     schema and inserts a key "" without one). HeaderFrom names a missing
//     struct field where Kafka throws a NullPointerException.
//   - Filter and ContentBasedRouter take `language` as optional (cel when
//     given; Debezium requires it); a router expression giving "" fails.
//   - Derived schemas are cached per input schema pointer (bounded), not
//     by Schema.equals in an LRU of 16: two equal schemas built apart get
//     two equal derived schemas.
//
// Wired (issue 30, the wiring): connector/config's `transforms` key is
// Parse'd at Validate; connector/internal/record's ConnectView makes each
// record's Record (Partition and Timestamp nil as Debezium's
// EventDispatcher.java:535-542 at v3.6.1.Final leaves them, so
// InsertField's partition.field and timestamp.field insert null; the four
// context headers of DebeziumHeaderProducer.java:61-68 on change records),
// the codec runs the Chain on it and writes what it returns with
// connectformat's converters; a *Error parks the record's table
// (TableLocal) with its LSN in `status`, a dropped record still moves the
// position. FromJSON reads in one pass under the schema (jsonread.go),
// held to an encoding/json reference by a test and a fuzz target.
//
// TranslateScript (scripttranslate.go) turns Debezium's Groovy and
// JavaScript conditions into CEL where the translation is mechanical, for
// import-debezium; what it cannot translate exactly it refuses.
//
// What remains: a view built without the JSON round trip (it costs an
// encode and a read per record: BenchmarkConnectView in record); the
// per-record cost of a condition is BenchmarkCondition here.
package transform
