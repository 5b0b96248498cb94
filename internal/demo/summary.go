package main

import (
	"strings"
	"time"
)

// summary is what printSummary reports.
type summary struct {
	Load     loadStats
	Counts   map[string]map[string]int // topic → op → records read
	Records  int
	Complete bool // every expected record was read
	LastRead time.Time
	Written  float64 // mooncdc_changes_written_total; -1 if unknown
	ExitCode int
	Binary   string // the mooncdc binary, as the user gave it
	Format   string // of the records: JSON or Avro
}

// summaryOps are the columns of the summary's records table: the
// snapshot's reads first.
var summaryOps = append([]string{"r"}, opOrder...)

// printSummary prints the closing summary and the ways to go further.
func printSummary(u ui, s summary) {
	u.printf("\nSummary\n")
	u.printf("  tables    %s, %s → topics %s.<schema>.<table>, %s records\n", strings.Join(demoTables, ", "), seedTable, topicPrefix, s.Format)
	u.printf("  records   %-24s", "topic")
	for _, op := range summaryOps {
		u.printf(" %9s", op)
	}
	u.printf(" %9s\n", "total")
	for _, topic := range append(demoTopics(), seedTopic) {
		u.printf("            %-24s", topic)
		total := 0
		for _, op := range summaryOps {
			n := s.Counts[topic][op]
			total += n
			u.printf(" %9d", n)
		}
		u.printf(" %9d\n", total)
	}
	u.printf("  changes   %d written to Postgres in %d transactions", s.Load.Changes(), s.Load.Transactions)
	if s.Written >= 0 {
		u.printf("; mooncdc wrote %.0f change records to Kafka", s.Written)
	}
	u.printf("\n")
	if span := s.LastRead.Sub(s.Load.Start); s.Records > 0 && span > 0 {
		u.printf("  rate      %d records in %.1fs (first write to last record read) = %.0f records/s\n",
			s.Records, span.Seconds(), float64(s.Records)/span.Seconds())
		if s.Complete {
			u.printf("            paced by the demo's single writer; the last record was read %s after the last commit\n",
				s.LastRead.Sub(s.Load.End).Round(time.Millisecond))
		}
	}
	u.printf("  mooncdc   exit code %d\n", s.ExitCode)

	u.printf("\nGo further\n")
	u.printf("  Stream your own database (wal_level=logical; a role with REPLICATION that may create a\n")
	u.printf("  publication for the tables: mooncdc creates the publication and the slot). In mooncdc.yaml:\n\n")
	for _, line := range strings.Split(strings.TrimRight(exampleConfig, "\n"), "\n") {
		u.printf("      %s\n", line)
	}
	u.printf("\n  check it:  %s check --config mooncdc.yaml   (✓/✗ per requirement, with the fix)\n", s.Binary)
	u.printf("  and run:   %s run --config mooncdc.yaml     (all keys: %s help run)\n", s.Binary, s.Binary)
	u.printf("  where it is: %s status --config mooncdc.yaml (phases, copy progress, the slot's lag)\n", s.Binary)
	u.printf("  Read the topics, <name>.<schema>.<table>, decoded:  %s tail --config mooncdc.yaml shop.public.orders\n", s.Binary)
	u.printf("  or with any Kafka client (the embedded Kafka, too, listens on localhost:9092 while mooncdc runs):\n")
	u.printf("      kcat -C -b localhost:9092 -t shop.public.orders -f '%%k %%s\\n'\n")
	u.printf("      kafka-console-consumer.sh --bootstrap-server localhost:9092 --topic shop.public.orders \\\n")
	u.printf("          --from-beginning --property print.key=true\n")
	u.printf("  Run the tests (they start their own Postgres and Kafka, like this demo):  make test\n")
}
