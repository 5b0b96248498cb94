package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mooncdc/mooncdc/internal/srtest"
)

// registry is the Schema Registry of an Avro demo.
type registry struct {
	url   string
	about string // one line for the demo's output
	close func()
}

// startRegistry returns the registry at url, or, when url is empty, starts
// the in-process stand-in (internal/srtest), which lives as long as the
// demo: it keeps the schemas in memory.
func startRegistry(url string) (*registry, error) {
	if url != "" {
		return &registry{url: url, about: "using the Schema Registry at " + url, close: func() {}}, nil
	}
	r, err := srtest.Start()
	if err != nil {
		return nil, fmt.Errorf("start the Schema Registry stand-in: %w", err)
	}
	return &registry{
		url:   r.URL(),
		about: fmt.Sprintf("a Schema Registry stand-in (internal/srtest, in this process) on %s; -registry URL uses a real one", r.URL()),
		close: r.Close,
	}, nil
}

// printSubjects lists the subjects mooncdc registered for the demo's topics.
func printSubjects(ctx context.Context, u ui, d *avroDecoder) {
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	subjects, err := d.cl.Subjects(ctx)
	if err != nil {
		u.printf("\nThe registry's subjects: cannot list them: %v\n", err)
		return
	}
	var ours []string
	for _, s := range subjects {
		if strings.HasPrefix(s, topicPrefix+".") {
			ours = append(ours, s)
		}
	}
	u.printf("\nSchemas mooncdc registered (subjects <topic>-key and <topic>-value; records carry the schema id):\n")
	for _, s := range ours {
		u.printf("  %s\n", s)
	}
}
